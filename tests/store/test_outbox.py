"""The outbox's contract (``cs_outbox``) on SQLite and PostgreSQL: owed once per key, claimed
by one instance at a time (a lapsed claim claimable again, counted as a second attempt), tried
again when it says, forgotten when done; payloads sealed at rest."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from bot.security.codec import EncryptingCodec
from bot.security.keys import generate_key, parse_key_ring
from bot.store.database import Database
from bot.store.outbox import OutboxEntry, SqlOutbox
from bot.testing import FakeClock
from tests.databases import BACKENDS, database

KEY = generate_key("key-a").entry()
CLAIM = timedelta(seconds=90)


@dataclass
class Box:
    outbox: SqlOutbox
    other: SqlOutbox
    """The same table seen by another instance."""
    database: Database
    clock: FakeClock


@pytest.fixture(params=BACKENDS)
async def box(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Box]:
    clock = FakeClock()
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(clock.now())
        codec = EncryptingCodec(parse_key_ring(KEY))
        yield Box(SqlOutbox(opened, codec), SqlOutbox(opened, codec), opened, clock)


def entry(box: Box, key: str = "slack:line:1", **changes: object) -> OutboxEntry:
    fields: dict[str, object] = {
        "entry_id": key,
        "channel": "slack",
        "kind": "post",
        "tenant_id": "T0TEAM",
        "pause_id": None,
        "payload": {"channel": "C0GENERAL", "text": "refund 1,234.50 to ann@example.com"},
        "due_at": box.clock.now(),
        "created_at": box.clock.now(),
    }
    return OutboxEntry(**{**fields, **changes})  # type: ignore[arg-type]


async def test_a_thing_is_owed_once_per_key_and_forgotten_when_done(box: Box) -> None:
    assert await box.outbox.owe(entry(box))
    assert not await box.outbox.owe(entry(box, payload={"text": "another"}))
    kept = await box.outbox.get("slack:line:1")
    assert kept is not None and kept.payload["text"] == "refund 1,234.50 to ann@example.com"
    assert await box.outbox.count("slack") == 1
    assert await box.outbox.count("slack", kind="update") == 0

    assert await box.outbox.done("slack:line:1")
    assert not await box.outbox.done("slack:line:1")
    assert await box.outbox.get("slack:line:1") is None


async def test_one_instance_claims_a_due_entry_until_its_claim_lapses(box: Box) -> None:
    later = entry(box, "slack:line:later", due_at=box.clock.now() + timedelta(seconds=5))
    await box.outbox.owe(entry(box))
    await box.outbox.owe(later)
    await box.outbox.owe(entry(box, "slack:line:web", channel="web"))
    now = box.clock.now()

    first, second = await asyncio.gather(
        box.outbox.claim_due("slack", now=now, until=now + CLAIM),
        box.other.claim_due("slack", now=now, until=now + CLAIM),
    )
    claimed = [e.entry_id for e in [*first, *second]]
    assert claimed == ["slack:line:1"]  # once, by one of them; the later one is not due
    assert [*first, *second][0].attempts == 1

    now += CLAIM  # the claimer died: its claim lapses
    again = await box.other.claim_due("slack", now=now, until=now + CLAIM)
    assert [(e.entry_id, e.attempts) for e in again] == [
        ("slack:line:later", 1),
        ("slack:line:1", 2),  # a second attempt: it may have been said
    ]


async def test_a_failed_entry_waits_until_it_is_due_again(box: Box) -> None:
    await box.outbox.owe(entry(box))
    now = box.clock.now()
    [claimed] = await box.outbox.claim_due("slack", now=now, until=now + CLAIM)
    await box.outbox.retry_at(claimed.entry_id, now + timedelta(seconds=20), error="ratelimited")

    assert await box.outbox.claim_due("slack", now=now + timedelta(seconds=19), until=now) == []
    kept = await box.outbox.get(claimed.entry_id)
    assert kept is not None and kept.last_error == "ratelimited"
    due = now + timedelta(seconds=20)
    assert [e.attempts for e in await box.outbox.claim_due("slack", now=due, until=due)] == [2]


async def test_waking_makes_what_waits_after_a_failure_due_but_not_what_is_being_tried(
    box: Box,
) -> None:
    await box.outbox.owe(entry(box, "slack:line:failed"))
    await box.outbox.owe(entry(box, "slack:line:tried", due_at=box.clock.now() + CLAIM))
    now = box.clock.now()
    [failed] = await box.outbox.claim_due("slack", now=now, until=now + CLAIM)
    await box.outbox.retry_at(failed.entry_id, now + timedelta(seconds=10), error="fatal_error")

    assert await box.outbox.wake("slack", now=now) == 1
    due = await box.outbox.claim_due("slack", now=now, until=now + CLAIM)
    assert [e.entry_id for e in due] == ["slack:line:failed"]  # the one in flight left alone
    assert await box.outbox.wake("slack", now=now) == 0  # claimed again: not failed now


async def test_what_is_owed_is_sealed_at_rest(box: Box) -> None:
    await box.outbox.owe(entry(box))
    async with box.database.engine.connect() as connection:
        rows = (await connection.execute(text("SELECT * FROM cs_outbox"))).all()
    assert len(rows) == 1
    assert "ann@example.com" not in repr(rows) and "1,234.50" not in repr(rows)


async def test_an_entry_is_kept_claimed_only_by_the_instance_whose_claim_still_holds(
    box: Box,
) -> None:
    """An entry owed before its moment (a reply's reading, owed before the answer is recorded)
    is claimed again by its owner only if no other instance claimed it meanwhile."""
    owed = entry(box, due_at=box.clock.now() + CLAIM, attempts=1)
    await box.outbox.owe(owed)
    assert await box.outbox.claim(owed, until=box.clock.now() + CLAIM)

    now = box.clock.now() + CLAIM  # the owner was slow: its claim lapsed, another took it
    [taken] = await box.other.claim_due("slack", now=now, until=now + CLAIM)
    assert taken.attempts == 2
    assert not await box.outbox.claim(owed, until=now + CLAIM)  # not the owner's any more
    kept = await box.outbox.get(owed.entry_id)
    assert kept is not None and kept.due_at == now + CLAIM
    assert await box.other.claim(taken, until=now + 2 * CLAIM)
