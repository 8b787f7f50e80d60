"""Where store transactions run: worker threads for a SQLite file, the async engine otherwise."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, event, insert, select
from sqlalchemy.util import greenlet_spawn

from bot.store import direct
from bot.store import transactions as transactions_module
from bot.store.database import Database, sqlite_pragmas
from bot.store.tables import leases
from bot.store.transactions import (
    AsyncEngineTransactions,
    ThreadedSqliteTransactions,
    Transactions,
    calls_ahead,
)
from tests.databases import postgres_database

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["file", "memory"])
async def transactions(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Transactions]:
    url = (
        f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"
        if request.param == "file"
        else "sqlite+aiosqlite:///:memory:"
    )
    async with Database.open(url) as database:
        await database.migrate(NOW)
        yield database.transactions


def _lease(root: str) -> dict[str, object]:
    return {"root_execution_id": root, "owner": "o", "acquired_at": NOW, "expires_at": NOW}


def _roots(connection: Connection) -> list[str]:
    return sorted(connection.execute(select(leases.c.root_execution_id)).scalars())


async def test_a_sqlite_file_runs_bodies_in_worker_threads(tmp_path: Path) -> None:
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        opened = database.transactions
        assert isinstance(opened, ThreadedSqliteTransactions)
        seen = await opened.read(lambda _: threading.current_thread())
        assert seen is not threading.current_thread()


def test_postgresql_and_in_memory_sqlite_run_on_the_async_engine() -> None:
    for url in ("sqlite+aiosqlite:///:memory:", "postgresql+asyncpg://u@127.0.0.1/none"):
        assert isinstance(Database.open(url).transactions, AsyncEngineTransactions)


async def test_a_write_commits_and_a_failed_one_leaves_nothing(transactions: Transactions) -> None:
    await transactions.write(lambda c: c.execute(insert(leases), _lease("a")))

    def half_then_fail(connection: Connection) -> None:
        connection.execute(insert(leases), _lease("b"))
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        await transactions.write(half_then_fail)
    assert await transactions.read(_roots) == ["a"]


async def test_a_cancelled_caller_s_transaction_still_finishes(transactions: Transactions) -> None:
    started = threading.Event()

    def slow(connection: Connection) -> None:
        started.set()
        time.sleep(0.05)  # blocks its thread (or, in memory, the greenlet) like a slow statement
        connection.execute(insert(leases), _lease("late"))

    call = asyncio.ensure_future(transactions.write(slow))
    while not started.is_set():  # noqa: ASYNC110 - a thread sets it, not a coroutine
        await asyncio.sleep(0.001)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    for _ in range(200):
        if await transactions.read(_roots) == ["late"]:
            break
        await asyncio.sleep(0.01)
    assert await transactions.read(_roots) == ["late"]


async def test_concurrent_writes_all_land(transactions: Transactions) -> None:
    def two_statements(root: str) -> Callable[[Connection], None]:
        def body(connection: Connection) -> None:
            connection.execute(insert(leases), _lease(root))
            connection.execute(insert(leases), _lease(root + "-2"))

        return body

    await asyncio.gather(*(transactions.write(two_statements(f"r{i}")) for i in range(30)))
    assert len(await transactions.read(_roots)) == 60


async def test_calls_one_after_another_run_on_one_worker(tmp_path: Path) -> None:
    """The worker idle last takes the next call: its connection's page cache is still good
    (another connection's write would have dropped it). Calls at once spread over all."""
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        await database.migrate(NOW)
        tx = database.transactions
        assert isinstance(tx, ThreadedSqliteTransactions)
        await asyncio.gather(*(tx.read(lambda _: time.sleep(0.05)) for _ in range(8)))
        seen = set()
        for n in range(12):
            seen.add(await tx.write(_inserting(f"r{n}")))
            seen.add(await tx.read(lambda _: threading.current_thread().name))
        assert len(seen) == 1
        assert len(await tx.read(_roots)) == 12
        started, release = threading.Event(), threading.Event()

        def hold(_: Connection) -> str:
            started.set()
            release.wait(10)
            return threading.current_thread().name

        holding = asyncio.ensure_future(tx.read(hold))
        assert await asyncio.to_thread(started.wait, 10)
        other = await tx.read(lambda _: threading.current_thread().name)
        release.set()
        assert await holding != other  # a busy worker's call went to another


def _inserting(root: str) -> Callable[[Connection], str]:
    def body(connection: Connection) -> str:
        connection.execute(insert(leases), _lease(root))
        return threading.current_thread().name

    return body


async def test_a_read_holds_no_snapshot_after_it_returns(tmp_path: Path) -> None:
    """Workers keep their connections: a read must still end its transaction, or its WAL
    snapshot would keep every checkpoint from reaching the end of the log."""
    path = tmp_path / "x.db"
    async with Database.open(f"sqlite+aiosqlite:///{path}") as database:
        await database.migrate(NOW)
        tx = database.transactions
        assert isinstance(tx, ThreadedSqliteTransactions)
        await asyncio.gather(*(tx.read(_roots) for _ in range(8)))  # every worker has read
        await tx.write(lambda c: c.execute(insert(leases), _lease("a")))
        assert _log_checkpointed(path)  # no reader held the log


async def test_a_worker_whose_connection_failed_serves_the_next_call(tmp_path: Path) -> None:
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        await database.migrate(NOW)
        tx = _one_worker(database)
        try:

            def break_it(connection: Connection) -> None:
                connection.connection.dbapi_connection.close()  # type: ignore[union-attr]
                connection.execute(select(leases))

            with pytest.raises(Exception, match="closed"):
                await tx.write(break_it)
            await tx.write(lambda c: c.execute(insert(leases), _lease("after")))
            assert await tx.read(_roots) == ["after"]
        finally:
            await tx.close()
        with pytest.raises(RuntimeError, match="closed"):
            await tx.read(_roots)


async def test_calls_made_ahead_run_before_the_calls_already_queued(tmp_path: Path) -> None:
    """A request waiting for its answer (a click before its 200) is not kept behind the
    calls background work queued before it; among themselves, each lane keeps its order."""
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        await database.migrate(NOW)
        tx = _one_worker(database)
        ran: list[str] = []
        started, release = threading.Event(), threading.Event()

        def hold(connection: Connection) -> None:
            started.set()
            release.wait(10)

        def note(name: str) -> Callable[[Connection], None]:
            return lambda connection: ran.append(name)

        try:
            holding = asyncio.ensure_future(tx.read(hold))
            assert await asyncio.to_thread(started.wait, 10)  # the one worker busy: calls queue
            queued = [asyncio.ensure_future(tx.write(note(f"work {n}"))) for n in range(3)]
            with calls_ahead():
                acked = [asyncio.ensure_future(tx.read(note(f"ack {n}"))) for n in range(2)]
                with calls_ahead(False):  # work a request starts: back in turn
                    queued.append(asyncio.ensure_future(tx.write(note("work 3"))))
            await asyncio.sleep(0)  # every call handed over
            release.set()
            await asyncio.gather(holding, *queued, *acked)
        finally:
            release.set()
            await tx.close()
        assert ran == ["ack 0", "ack 1", "work 0", "work 1", "work 2", "work 3"]


INSERT_LEASE = insert(leases)
ROOTS = select(leases.c.root_execution_id).order_by(leases.c.root_execution_id)


def _direct_roots(connection: Connection) -> list[str]:
    return [row._mapping["root_execution_id"] for row in direct.rows(connection, ROOTS, {})]


async def test_writes_on_the_cursor_directly_commit_together_or_not_at_all(
    transactions: Transactions,
) -> None:
    """A body whose statements all went to the driver (no SQLAlchemy transaction began) is
    committed all the same, with those that went SQLAlchemy's way, and rolled back whole."""

    def only_direct(connection: Connection) -> None:
        direct.execute(connection, INSERT_LEASE, _lease("a"))
        direct.execute(connection, INSERT_LEASE, _lease("b"))

    def mixed(connection: Connection) -> None:
        direct.execute(connection, INSERT_LEASE, _lease("c"))
        connection.execute(INSERT_LEASE, _lease("d"))

    def direct_then_fail(connection: Connection) -> None:
        direct.execute(connection, INSERT_LEASE, _lease("e"))
        raise RuntimeError("stop")

    def mixed_then_fail(connection: Connection) -> None:
        connection.execute(INSERT_LEASE, _lease("f"))
        direct.execute(connection, INSERT_LEASE, _lease("g"))
        raise RuntimeError("stop")

    await transactions.write(only_direct)
    await transactions.write(mixed)
    for failing in (direct_then_fail, mixed_then_fail):
        with pytest.raises(RuntimeError):
            await transactions.write(failing)
    assert await transactions.read(_direct_roots) == ["a", "b", "c", "d"]
    assert await transactions.read(_roots) == ["a", "b", "c", "d"]


async def test_a_direct_read_holds_no_snapshot_after_it_returns(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    async with Database.open(f"sqlite+aiosqlite:///{path}") as database:
        await database.migrate(NOW)
        tx = database.transactions
        await tx.write(lambda c: direct.execute(c, INSERT_LEASE, _lease("a")))
        await asyncio.gather(*(tx.read(_direct_roots) for _ in range(8)))  # every worker read
        await tx.write(lambda c: direct.execute(c, INSERT_LEASE, _lease("b")))
        assert _log_checkpointed(path)  # no reader held the log


async def test_a_watched_engine_sees_each_transaction_committed(tmp_path: Path) -> None:
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        await database.migrate(NOW)
        tx = _one_worker(database)
        commits: list[str] = []
        event.listen(tx._engine, "commit", lambda _: commits.append("commit"))
        try:
            await tx.write(lambda c: direct.execute(c, INSERT_LEASE, _lease("a")))
            assert commits == ["commit"]
            assert await tx.read(_direct_roots) == ["a"]
        finally:
            await tx.close()


@pytest.mark.postgres
async def test_on_postgresql_each_call_is_one_hop_to_the_greenlet_bridge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Check-out, body, commit and check-in in one ``greenlet_spawn`` (``AsyncEngine.begin``
    and ``run_sync`` made five); a write still commits whole or not at all."""
    async with postgres_database() as url, Database.open(url) as database:
        await database.migrate(NOW)
        tx = database.transactions
        assert isinstance(tx, AsyncEngineTransactions)
        hops: list[str] = []
        spawn = greenlet_spawn

        async def counted(fn: Callable[..., Any], *args: Any) -> Any:
            hops.append(fn.__name__)
            return await spawn(fn, *args)

        monkeypatch.setattr(transactions_module, "greenlet_spawn", counted)

        def half_then_fail(connection: Connection) -> None:
            direct.execute(connection, INSERT_LEASE, _lease("b"))
            raise RuntimeError("stop")

        await tx.write(lambda c: direct.execute(c, INSERT_LEASE, _lease("a")))
        with pytest.raises(RuntimeError):
            await tx.write(half_then_fail)
        await tx.apply(lambda c: direct.execute(c, INSERT_LEASE, _lease("c")))
        assert await tx.read(_direct_roots) == ["a", "c"]
        # the connection the autocommit calls used (the pool's one) is back in transactions
        with pytest.raises(RuntimeError):
            await tx.write(half_then_fail)
        assert await tx.read(_direct_roots) == ["a", "c"]
        assert hops == ["run"] * 6  # each on the connection the call before it kept


def _one_worker(database: Database) -> ThreadedSqliteTransactions:
    """Transactions on ``database``'s file served by a single worker thread."""
    return ThreadedSqliteTransactions.open(
        database.url.url,
        busy_timeout_s=1,
        on_connect=sqlite_pragmas(timedelta(seconds=1)),
        workers=1,
    )


def _log_checkpointed(path: Path) -> bool:
    """Whether another connection could checkpoint the whole write-ahead log of ``path``."""
    other = sqlite3.connect(path)
    try:
        busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        other.close()
    return bool(busy == 0)
