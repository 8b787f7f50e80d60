"""Short store calls on a SQLite file run on the loop's own connection, never waiting on it.

``short=True`` (``bot.store.transactions``): no hand-off to a worker thread when SQLite can
serve the call at once; when another connection holds the write lock (another process, or a
worker here), the call goes to a worker as any other, and the loop goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, insert, select
from sqlalchemy.exc import IntegrityError

from bot.store.database import Database
from bot.store.tables import leases
from bot.store.transactions import ThreadedSqliteTransactions

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as opened:
        await opened.migrate(NOW)
        assert isinstance(opened.transactions, ThreadedSqliteTransactions)
        yield opened


def _lease(root: str) -> dict[str, object]:
    return {"root_execution_id": root, "owner": "o", "acquired_at": NOW, "expires_at": NOW}


def _roots(connection: Connection) -> list[str]:
    return sorted(connection.execute(select(leases.c.root_execution_id)).scalars())


def _other_process_holds_the_write_lock(path: Path) -> sqlite3.Connection:
    """A connection of its own (as another process's) in a write transaction, uncommitted."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute(
        "INSERT INTO cs_leases (root_execution_id, owner, acquired_at, expires_at)"
        " VALUES ('theirs', 'x', '2026-03-01 12:00:00', '2026-03-01 12:00:00')"
    )
    return other


async def test_short_calls_run_on_the_loops_thread_and_others_on_a_worker(
    database: Database,
) -> None:
    tx = database.transactions
    here = threading.current_thread()

    def where(connection: Connection) -> threading.Thread:
        connection.execute(
            insert(leases), _lease(f"r{threading.get_ident()}-{len(_roots(connection))}")
        )
        return threading.current_thread()

    assert await tx.write(where, short=True) is here
    assert await tx.apply(where, short=True) is here
    assert await tx.read(lambda _: threading.current_thread(), short=True) is here
    assert await tx.write(where) is not here
    assert await tx.read(lambda _: threading.current_thread()) is not here
    assert len(await tx.read(_roots, short=True)) == 3


async def test_a_short_write_waits_in_a_worker_while_another_process_writes(
    database: Database, tmp_path: Path
) -> None:
    """The loop is never kept waiting for SQLite's lock: the write is handed to a worker, which
    waits; the body runs once, after the other writer committed. The other writer commits once
    the loop has turned with the write under way (or gives up waiting for that, after 10 s:
    the loop was stuck in the write)."""
    tx = database.transactions
    other = _other_process_holds_the_write_lock(tmp_path / "x.db")
    loop_turned = threading.Event()
    saw_the_loop_turn: list[bool] = []

    def other_process() -> None:
        saw_the_loop_turn.append(loop_turned.wait(10))
        other.execute("COMMIT")
        other.close()

    runs: list[threading.Thread] = []

    def body(connection: Connection) -> None:
        runs.append(threading.current_thread())
        connection.execute(insert(leases), _lease("ours"))

    write = asyncio.create_task(tx.write(body, short=True))
    committer = threading.Thread(target=other_process)
    committer.start()
    for _ in range(3):
        await asyncio.sleep(0)
    # a short read meanwhile is served at once, on the loop (a WAL reader waits for no writer)
    assert await tx.read(_roots, short=True) == []
    loop_turned.set()
    await write
    await asyncio.get_running_loop().run_in_executor(None, committer.join)
    assert saw_the_loop_turn == [True]
    assert len(runs) == 1 and runs[0] is not threading.current_thread()
    assert await tx.read(_roots, short=True) == ["ours", "theirs"]


async def test_a_short_write_fails_over_to_a_worker_when_a_worker_holds_the_lock(
    database: Database,
) -> None:
    tx = database.transactions
    holding, release = threading.Event(), threading.Event()

    def long_write(connection: Connection) -> None:
        connection.execute(insert(leases), _lease("long"))
        holding.set()
        release.wait(5)

    long = asyncio.create_task(tx.write(long_write))
    await asyncio.get_running_loop().run_in_executor(None, holding.wait, 5)
    short = asyncio.create_task(
        tx.write(
            lambda c: (c.execute(insert(leases), _lease("short")), threading.current_thread())[1],
            short=True,
        )
    )
    await asyncio.sleep(0.02)
    assert not short.done()  # waiting for the lock in a worker, not on the loop
    release.set()
    await long
    assert await short is not threading.current_thread()
    assert await tx.read(_roots, short=True) == ["long", "short"]


async def test_a_refused_short_insert_rolls_back_and_the_next_short_call_runs_on_the_loop(
    database: Database,
) -> None:
    tx = database.transactions
    await tx.apply(lambda c: c.execute(insert(leases), _lease("a")), short=True)

    def twice(connection: Connection) -> None:
        connection.execute(insert(leases), _lease("b"))
        connection.execute(insert(leases), _lease("a"))  # refused: the key is taken

    with pytest.raises(IntegrityError):
        await tx.write(twice, short=True)
    assert await tx.read(_roots, short=True) == ["a"]  # "b" rolled back with it
    assert await tx.read(lambda _: threading.current_thread(), short=True) is (
        threading.current_thread()
    )


async def test_a_failing_short_body_leaves_nothing_and_the_connection_serves_on(
    database: Database,
) -> None:
    tx = database.transactions

    def half_then_fail(connection: Connection) -> None:
        connection.execute(insert(leases), _lease("b"))
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        await tx.write(half_then_fail, short=True)
    await tx.write(lambda c: c.execute(insert(leases), _lease("c")), short=True)
    assert await tx.read(_roots) == ["c"]  # seen from a worker's connection: committed


async def test_short_calls_after_close_are_refused(tmp_path: Path) -> None:
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        await database.migrate(NOW)
        tx = database.transactions
        await tx.read(_roots, short=True)
        await tx.close()
        with pytest.raises(RuntimeError, match="closed"):
            await tx.read(_roots, short=True)


async def test_short_calls_from_another_threads_loop_go_to_a_worker(database: Database) -> None:
    """The loop's connection serves the thread that first used it: another event loop, in
    another thread, has its short calls handed to a worker (no two transactions interleave
    on one connection)."""
    tx = database.transactions
    here = threading.current_thread()
    assert await tx.read(lambda _: threading.current_thread(), short=True) is here

    def elsewhere() -> tuple[threading.Thread, threading.Thread]:
        async def both() -> tuple[threading.Thread, threading.Thread]:
            read = await tx.read(lambda _: threading.current_thread(), short=True)
            wrote = await tx.write(
                lambda c: (c.execute(insert(leases), _lease("x")), threading.current_thread())[1],
                short=True,
            )
            return read, wrote

        return asyncio.run(both())

    other = await asyncio.get_running_loop().run_in_executor(None, elsewhere)
    assert here not in other and all(t.name.startswith("cs-sqlite-") for t in other)
    assert await tx.read(lambda _: threading.current_thread(), short=True) is here
    assert await tx.read(_roots, short=True) == ["x"]
