"""The checkpointer's PostgreSQL pool checks a connection before handing it out, as the store's
pool does: after the server closed its connections (a restart), the next pass gets a live one
instead of failing (issue 24, finding 7). It pings only a connection idle for a while or one the
server has said something on since (its socket readable: a restart closes it), not each one
(issue 32)."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from langchain_core.runnables import RunnableConfig
from psycopg_pool import AsyncConnectionPool

from bot.runtime import checkpoints
from bot.runtime.checkpoints import open_checkpointer
from bot.store.database import DatabaseUrl
from tests.databases import postgres_database


async def test_a_connection_the_server_closed_is_not_handed_to_a_pass() -> None:
    async with postgres_database() as url:
        opened = await open_checkpointer(DatabaseUrl.checked(url), serde=None)
        try:
            config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
            assert await opened.saver.aget_tuple(config) is None  # the pool's connection works
            name = url.rsplit("/", 1)[-1]
            admin = await asyncpg.connect(url.replace("+asyncpg", "").rsplit("/", 1)[0] + "/test")
            try:  # what a server restart does to every connection it had: each backend gone
                # (waited for: a check-out racing its end would find the socket silent still)
                await admin.execute(
                    "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                    "WHERE datname = $1 AND pid <> pg_backend_pid()",
                    name,
                )
            finally:
                await admin.close()
            assert await opened.saver.aget_tuple(config) is None  # a new connection, not a dead one
        finally:
            await opened.close()


async def test_a_connection_used_moments_ago_is_not_pinged_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A busy pool pays no round trip per check-out (psycopg_pool's ``check_connection`` made
    about 12 per pause cycle); an idle one is pinged as before (issue 32)."""
    pings: list[object] = []
    ping = AsyncConnectionPool.check_connection

    async def counted(connection: Any) -> None:
        pings.append(connection)
        await ping(connection)

    monkeypatch.setattr(AsyncConnectionPool, "check_connection", counted)
    async with postgres_database() as url:
        await _read_a_thread_with_no_checkpoint(url, times=20)
        # each connection at its first check-out only (the pool opens one or two)
        assert 1 <= len(pings) == len({id(connection) for connection in pings}) <= 2
        monkeypatch.setattr(checkpoints, "IDLE_PING_SECONDS", 0.0)  # every return is "idle"
        pings.clear()
        await _read_a_thread_with_no_checkpoint(url, times=5)
        assert len(pings) >= 5


async def test_a_returned_connection_goes_back_to_the_pool_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No reset hook: with one, psycopg_pool hands every returned connection to its worker task
    (a queue and a task switch per checkpointer call, 12 per pause cycle) (issue 32)."""
    from psycopg_pool.pool_async import ReturnConnection

    tasks: list[object] = []
    run_task = AsyncConnectionPool.run_task

    def counted(pool: Any, task: Any) -> None:
        tasks.append(task)
        run_task(pool, task)

    monkeypatch.setattr(AsyncConnectionPool, "run_task", counted)
    async with postgres_database() as url:
        await _read_a_thread_with_no_checkpoint(url, times=10)
    assert not [task for task in tasks if isinstance(task, ReturnConnection)]


async def _read_a_thread_with_no_checkpoint(url: str, *, times: int) -> None:
    """``times`` reads of a thread that has no checkpoint, on a checkpointer of its own."""
    config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    opened = await open_checkpointer(DatabaseUrl.checked(url), serde=None)
    try:
        for _ in range(times):
            assert await opened.saver.aget_tuple(config) is None
    finally:
        await opened.close()
