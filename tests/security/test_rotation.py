"""Key rotation: rows written under key A read after rotating to "B,A"; ``reencrypt`` leaves no
value under A (every stored value's key id is scanned), and the data reads under "B" alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Text

import bot.wiring
from bot import SettingsError
from bot.security import parse_key_ring, reencrypt_database
from bot.security.reencrypt import PAYLOAD_COLUMNS
from bot.store.codec import JsonCodec
from bot.store.tables import metadata
from tests.databases import BACKENDS, database
from tests.office import Inbox, Ledger
from tests.security.office_run import (
    KEY_A,
    KEY_B,
    PURPOSE,
    TENANT,
    approve_refund,
    check_finished,
    found_in,
    key_ids,
    open_office,
    plain_checkpoint_types,
    raw_values,
    reject_expense,
    script_office,
    start_office,
    stored_values,
)

PLAIN_TEXT_COLUMNS: set[str] = {"cs_pauses.route"}
"""Every text column holding payloads is encrypted; a policy's route holds ids and durations
(approvers, a conversation, a timing), kept in clear like a workspace's settings."""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_rotation_then_reencrypt_leaves_nothing_under_the_old_key(
    backend: str, tmp_path: Path
) -> None:
    script_office()
    inbox, ledger = Inbox(), Ledger()
    async with database(backend, tmp_path) as url:
        async with await open_office(url, KEY_A, inbox, ledger) as app:
            paused = await start_office(app)
        assert set(key_ids(await stored_values(url))) == {"key-a"}

        # rotated: what A wrote still reads, what is written now is under B
        async with await open_office(url, f"{KEY_B},{KEY_A}", inbox, ledger) as app:
            await approve_refund(app, inbox)
        mixed = key_ids(await stored_values(url))
        assert set(mixed) == {"key-a", "key-b"}

        # B alone cannot read A's rows yet: the App does not start, and says which key is missing
        with pytest.raises(SettingsError) as refused:
            await open_office(url, KEY_B, inbox, ledger)
        assert re.match(
            r"COUNTERSIGN_ENCRYPTION_KEYS cannot open the stored data: values in cs_\w+\.\w+ are "
            r"encrypted under key id 'key-a', which it does not hold",
            refused.value.message,
        )

        report = await reencrypt_database(url, parse_key_ring(f"{KEY_B},{KEY_A}"), batch_size=2)

        assert report.key_id == "key-b"
        assert report.total == mixed["key-a"]
        stored = await stored_values(url)
        assert key_ids(stored) == {"key-b": mixed.total()}  # every value, none lost
        assert plain_checkpoint_types(stored) == []
        again = await reencrypt_database(url, parse_key_ring(f"{KEY_B},{KEY_A}"))
        assert again.total == 0  # idempotent

        # the data still reads, and the run goes on, under B alone
        async with await open_office(url, KEY_B, inbox, ledger) as app:
            [pending] = [p for p in await app.list_pending(tenant_id=TENANT) if p.pause_id]
            assert pending.ask.arguments["purpose"] == PURPOSE
            check_finished(await reject_expense(app, paused.execution_id), ledger)
        assert set(key_ids(await stored_values(url))) == {"key-b"}


@pytest.mark.parametrize("backend", BACKENDS)
async def test_reencrypt_seals_values_stored_in_clear(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows written before encryption was turned on: plain JSON and plain checkpoints."""
    script_office()
    inbox, ledger = Inbox(), Ledger()
    async with database(backend, tmp_path) as url:
        with monkeypatch.context() as plain:
            plain.setattr(bot.wiring, "EncryptingCodec", lambda ring: JsonCodec())
            plain.setattr(bot.wiring, "encrypted_checkpoint_serde", lambda ring: None)
            async with await open_office(url, KEY_A, inbox, ledger) as app:
                paused = await start_office(app)
                await approve_refund(app, inbox)
        assert found_in(await raw_values(url)) != []  # in clear, as before encryption

        report = await reencrypt_database(url, parse_key_ring(KEY_A))

        assert report.total > 0
        stored = await stored_values(url)
        assert plain_checkpoint_types(stored) == []
        assert set(key_ids(stored)) == {"key-a"}
        async with await open_office(url, KEY_A, inbox, ledger) as app:
            check_finished(await reject_expense(app, paused.execution_id), ledger)


def test_reencrypt_knows_every_payload_column() -> None:
    """A new text column of ours is either re-encrypted or declared plain here."""
    text_columns = {
        f"{table.name}.{column.name}"
        for table in metadata.tables.values()
        for column in table.columns
        if isinstance(column.type, Text)
    }
    covered = {f"{p.table.name}.{c}" for p in PAYLOAD_COLUMNS for c in p.columns}

    assert text_columns == covered | PLAIN_TEXT_COLUMNS
