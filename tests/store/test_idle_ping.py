"""A pooled PostgreSQL connection closed while idle is replaced, not handed out broken."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

import bot.store.database as database_module
from bot.store.database import Database, DatabaseUrl, create_engine
from tests.databases import postgres_database

pytestmark = pytest.mark.postgres


async def _backend_pid(engine: AsyncEngine) -> int:
    async with engine.connect() as connection:
        return int((await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one())


async def _kill_backend(url: str, pid: int) -> None:
    """End the server process of connection ``pid`` (as a server restart would)."""
    admin = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()


async def test_a_connection_killed_while_idle_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database_module, "IDLE_PING_SECONDS", 0.05)
    async with postgres_database() as url:
        engine = create_engine(DatabaseUrl.parse(url))
        try:
            pid = await _backend_pid(engine)
            await _kill_backend(url, pid)
            await asyncio.sleep(0.1)  # idle for longer than the threshold
            assert await _backend_pid(engine) != pid  # pinged, dropped, a new connection
        finally:
            await engine.dispose()


async def test_a_busy_connection_is_not_pinged(monkeypatch: pytest.MonkeyPatch) -> None:
    pings: list[object] = []
    async with postgres_database() as url:
        engine = create_engine(DatabaseUrl.parse(url))
        try:
            original = engine.dialect.do_ping

            def counted(dbapi_connection: Any) -> bool:
                pings.append(dbapi_connection)
                return original(dbapi_connection)

            monkeypatch.setattr(engine.dialect, "do_ping", counted)
            for _ in range(5):
                await _backend_pid(engine)
            assert pings == []
            monkeypatch.setattr(database_module, "IDLE_PING_SECONDS", 0.0)
            await asyncio.sleep(0.01)
            await _backend_pid(engine)
            assert len(pings) == 1
        finally:
            await engine.dispose()


def _pid(connection: Any) -> int:
    return int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())


async def test_the_store_s_kept_connection_killed_while_idle_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The connection a store call keeps for the next (``transactions._Kept``) is pinged as the
    pool's idle ones are."""
    monkeypatch.setattr(database_module, "IDLE_PING_SECONDS", 0.05)
    async with postgres_database() as url, Database.open(url) as database:
        pid = await database.transactions.read(_pid)
        await _kill_backend(url, pid)
        await asyncio.sleep(0.1)  # kept for longer than the threshold
        assert await database.transactions.read(_pid) != pid


async def test_store_calls_one_at_a_time_check_out_one_connection() -> None:
    async with postgres_database() as url, Database.open(url) as database:
        checkouts: list[object] = []
        event.listen(database.engine.sync_engine, "checkout", lambda *_: checkouts.append(1))
        tx = database.transactions
        pids = {await tx.read(_pid) for _ in range(3)}
        pids |= {await tx.apply(_pid) for _ in range(3)}
        pids |= {await tx.write(_pid) for _ in range(3)}
        assert len(checkouts) == 1 and len(pids) == 1
