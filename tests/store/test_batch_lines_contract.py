"""Each person's last batch lines (``BatchLines``), on SQLite, PostgreSQL and in memory alike:
kept per tenant and person, replaced by the next, bounded; sealed at rest on a database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.security.codec import EncryptingCodec
from bot.security.keys import parse_key_ring
from bot.store.batch_lines import CUT, MAX_SAID, BatchLines, SqlBatchLines
from bot.store.database import Database
from bot.store.memory_batch_lines import MemoryBatchLines
from bot.store.migrations import MIGRATIONS
from bot.store.tables import batch_lines
from tests.databases import BACKENDS, STORE_BACKENDS, TEST_ENCRYPTION_KEYS, database
from tests.store.test_contract import NOW

SAID = "• *Refund 12.00 to A-1001*: Approved."


@pytest.fixture(params=STORE_BACKENDS)
async def lines(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BatchLines]:
    if request.param == "memory":
        yield MemoryBatchLines()
        return
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        assert await opened.migrate(NOW) == len(MIGRATIONS)
        yield SqlBatchLines(opened)


async def test_the_last_batch_is_kept_per_tenant_and_person_and_replaced_by_the_next(
    lines: BatchLines,
) -> None:
    assert await lines.last("acme", "ann") is None
    await lines.keep("acme", "ann", SAID, at=NOW)
    await lines.keep("acme", "bob", "• *Wire*: Rejected.", at=NOW)
    await lines.keep("other", "ann", "• *Elsewhere*: Approved.", at=NOW)
    assert await lines.last("acme", "ann") == SAID
    await lines.keep("acme", "ann", "• *Next*: Rejected.", at=NOW)
    assert await lines.last("acme", "ann") == "• *Next*: Rejected."  # the last batch only
    assert await lines.last("acme", "bob") == "• *Wire*: Rejected."
    assert await lines.last("other", "ann") == "• *Elsewhere*: Approved."


async def test_a_long_batch_is_kept_bounded_at_a_lines_end(lines: BatchLines) -> None:
    many = "\n".join(f"• *Refund {n} to A-{n:04d}*: Approved." for n in range(1000))
    await lines.keep("acme", "ann", many, at=NOW)
    kept = await lines.last("acme", "ann")
    assert kept is not None and len(kept) <= MAX_SAID
    assert many.startswith(kept.removesuffix(f"\n{CUT}")) and kept.endswith(f"Approved.\n{CUT}")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_lines_are_sealed_at_rest(backend: str, tmp_path: Path) -> None:
    codec = EncryptingCodec(parse_key_ring(TEST_ENCRYPTION_KEYS))
    async with database(backend, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        await SqlBatchLines(opened, codec).keep("acme", "ann", SAID, at=NOW)
        raw = await opened.transactions.read(
            lambda c: c.execute(select(batch_lines.c.said)).scalar()
        )
        assert "A-1001" not in str(raw)
        assert await SqlBatchLines(opened, codec).last("acme", "ann") == SAID
