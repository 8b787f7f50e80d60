"""The tool runs' contract (``ToolRuns``), run on SQLite, PostgreSQL and in memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.core.enums import ExecutionStatus
from bot.security.codec import EncryptingCodec
from bot.security.keys import parse_key_ring
from bot.store.database import Database
from bot.store.memory import MemoryStore
from bot.store.records import NewExecution, NewToolRun
from bot.store.repositories import PauseStore, ToolRuns
from bot.store.sql import SqlStore
from bot.store.tables import tool_runs
from bot.store.tool_runs import SqlToolRuns
from tests.databases import STORE_BACKENDS, TEST_ENCRYPTION_KEYS, database

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=STORE_BACKENDS)
async def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[ToolRuns, PauseStore]]:
    if request.param == "memory":
        memory = MemoryStore()
        yield memory.tool_runs, memory
        return
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        yield SqlToolRuns(opened), SqlStore(opened)


def started(key: str = "root-1|t1|tools:1|call-0", root: str = "root-1") -> NewToolRun:
    return NewToolRun(run_key=key, tenant_id="acme", root_execution_id=root, tool="refund", at=NOW)


async def test_a_run_starts_once_and_keeps_its_result(
    stores: tuple[ToolRuns, PauseStore],
) -> None:
    runs, _ = stores
    first = await runs.start(started())
    assert first.first and first.result is None
    again = await runs.start(started())
    assert not again.first and again.result is None  # started, no result: it may have run
    await runs.finish(first.run_key, {"content": "refunded"}, NOW)
    await runs.finish(first.run_key, {"content": "twice"}, NOW)  # a result saved stays
    done = await runs.start(started())
    assert not done.first and done.result == {"content": "refunded"}


async def test_forgetting_a_start_lets_the_run_start_again_unless_it_finished(
    stores: tuple[ToolRuns, PauseStore],
) -> None:
    runs, _ = stores
    await runs.start(started())
    await runs.forget("root-1|t1|tools:1|call-0")
    assert (await runs.start(started())).first
    await runs.finish("root-1|t1|tools:1|call-0", {"content": "ok"}, NOW)
    await runs.forget("root-1|t1|tools:1|call-0")
    assert (await runs.start(started())).result == {"content": "ok"}


async def test_the_runs_of_ended_trees_are_deleted(stores: tuple[ToolRuns, PauseStore]) -> None:
    runs, store = stores
    for root in ("ended", "live"):
        await store.ensure_execution(
            NewExecution(
                execution_id=root,
                root_execution_id=root,
                parent_execution_id=None,
                thread_id=root,
                tenant_id="acme",
                owner_id="U1",
                workflow="langgraph:g",
                input={},
                created_at=NOW,
            )
        )
        await runs.start(started(f"{root}|k", root))
    await store.set_status("ended", ExecutionStatus.COMPLETED, NOW)
    assert await runs.delete_of_trees_ended_before(NOW) == 0  # not before the cutoff yet
    assert await runs.delete_of_trees_ended_before(NOW + timedelta(seconds=1)) == 1
    assert (await runs.start(started("ended|k", "ended"))).first  # gone
    assert not (await runs.start(started("live|k", "live"))).first  # kept


async def test_a_result_is_sealed_at_rest(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    async with Database.open(url) as opened:
        await opened.migrate(NOW)
        codec = EncryptingCodec(parse_key_ring(TEST_ENCRYPTION_KEYS))
        runs = SqlToolRuns(opened, codec)
        await runs.start(started())
        await runs.finish(started().run_key, {"content": "card 4242 refunded"}, NOW)
        stored = await opened.transactions.read(
            lambda connection: connection.execute(select(tool_runs.c.result)).scalar_one()
        )
        assert "4242" not in stored
        assert (await runs.start(started())).result == {"content": "card 4242 refunded"}
