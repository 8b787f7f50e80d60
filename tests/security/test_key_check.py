"""The start's check that the key ring opens what the database holds reads LangGraph's
checkpoints too, on SQLite (the file beside the database) and PostgreSQL (its tables)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from bot import SettingsError
from bot.security.key_check import checkpoint_file_sampler, database_samplers, payload_samples
from bot.security.reencrypt import PAYLOAD_COLUMNS
from bot.store.database import Database, DatabaseUrl, checkpoint_path
from tests.databases import BACKENDS, database
from tests.office import Inbox, Ledger
from tests.security.office_run import KEY_A, open_office, script_office, start_office

CHECKPOINT_TABLES = {
    "sqlite": ("checkpoints", "writes"),
    "postgres": ("checkpoint_blobs", "checkpoint_writes"),
}


async def _rename_the_checkpoints_key(url: str, backend: str) -> None:
    """Every checkpoint value now names key id 'key-z' (which nobody has): only LangGraph's
    tables are touched, our payload columns still open with key A."""
    path = DatabaseUrl.parse(url).sqlite_path
    where = DatabaseUrl.sqlite_file(checkpoint_path(path)) if path is not None else url
    async with Database.open(where) as checkpoints, checkpoints.engine.begin() as connection:
        for table in CHECKPOINT_TABLES[backend]:
            await connection.execute(
                text(f"UPDATE {table} SET type = replace(type, '+v1.key-a', '+v1.key-z')")
            )


@pytest.mark.parametrize("backend", BACKENDS)
async def test_checkpoints_under_a_key_the_ring_lacks_refuse_the_start(
    backend: str, tmp_path: Path
) -> None:
    script_office()
    async with database(backend, tmp_path) as url:
        async with await open_office(url, KEY_A, Inbox(), Ledger()) as app:
            await start_office(app)
        await _rename_the_checkpoints_key(url, backend)

        with pytest.raises(SettingsError) as refused:
            await open_office(url, KEY_A, Inbox(), Ledger())

    assert refused.value.message.startswith(
        "COUNTERSIGN_ENCRYPTION_KEYS cannot open the stored data: values in "
    )
    assert refused.value.message.split("values in ")[1].split(" ")[0] in CHECKPOINT_TABLES[backend]
    assert "under key id 'key-z', which it does not hold" in refused.value.message


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_check_reads_every_payload_table_and_the_checkpoints(
    backend: str, tmp_path: Path
) -> None:
    script_office()
    async with database(backend, tmp_path) as url:
        async with await open_office(url, KEY_A, Inbox(), Ledger()) as app:
            await start_office(app)
        async with Database.open(url) as opened:
            payloads = await payload_samples(opened)
            in_file = checkpoint_file_sampler(opened)  # SQLite's checkpoints are beside it
            samplers = [*database_samplers(opened), *([in_file] if in_file else [])]
            read = [v for sampler in samplers for v in await sampler()]

    tables = {value.where.split(".")[0] for value in payloads}
    assert tables == {"cs_pauses", "cs_executions"}  # the tables this run wrote to
    assert tables <= {p.table.name for p in PAYLOAD_COLUMNS}
    assert {v.where for v in read if v.type_tag is not None} & set(CHECKPOINT_TABLES[backend])
    assert all(v.text is not None or (v.type_tag or "").endswith("+v1.key-a") for v in read)
