"""Where the store's transactions run: one short synchronous body per transaction.

A store call is a plain function of a SQLAlchemy ``Connection``, run in one transaction
(``write``), as statements each atomic on their own (``apply``), or on one connection for reads
(``read``). How it reaches the database depends on the backend:

- **A SQLite file** runs the body on SQLite's own driver in a worker thread: one hand-off per
  call. Through aiosqlite every statement costs four hand-offs to its thread (cursor, execute,
  fetch, close) and every transaction two more (commit, the pool's rollback), which made a
  store call cost about 1 ms where the work itself takes 0.1 ms.
- **PostgreSQL and an in-memory SQLite database** run the body through the async engine
  (``AsyncConnection.run_sync``): asyncpg needs no thread, and an in-memory database lives in
  its one async connection, which other parts of the application share. On PostgreSQL,
  ``apply`` and ``read`` run in autocommit, sparing the BEGIN and COMMIT round trips.

Either way a body sees the same synchronous connection API, so each query is written once.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from sqlalchemy import URL, Connection, Engine, event
from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy.ext.asyncio import AsyncEngine

R = TypeVar("R")

SQLITE_WORKERS = 4
"""Threads (and pooled connections) for a SQLite file: readers run side by side, a writer at a
time (SQLite's rule); a writer kept waiting by another process blocks its thread, never the loop."""


class Transactions(Protocol):
    async def write(self, body: Callable[[Connection], R]) -> R:
        """Run ``body`` in one transaction, committed when it returns."""
        ...

    async def apply(self, body: Callable[[Connection], R]) -> R:
        """Run ``body``, whose statements are each atomic by themselves (a conditional update;
        an insert, then a read if it inserted nothing): no transaction around them where the
        driver would spend round trips on one."""
        ...

    async def read(self, body: Callable[[Connection], R]) -> R:
        """Run ``body`` on one connection, for reads of one statement each."""
        ...

    async def close(self) -> None: ...


class AsyncEngineTransactions:
    """Bodies run through the async engine's greenlet bridge (asyncpg, in-memory SQLite).

    ``one_connection``: the engine shares one connection (in-memory SQLite), so calls take
    turns — two transactions interleaved on one connection would roll each other back.

    On PostgreSQL, reads and single statements run in autocommit: asyncpg spends a round trip
    on BEGIN and another on COMMIT (or the pool's ROLLBACK), two of three for such a call.
    """

    def __init__(self, engine: AsyncEngine, *, one_connection: bool = False) -> None:
        self._engine = engine
        self._turns = asyncio.Lock() if one_connection else None
        self._autocommit = (
            engine.execution_options(isolation_level="AUTOCOMMIT")
            if engine.dialect.name == "postgresql"
            else None
        )

    async def write(self, body: Callable[[Connection], R]) -> R:
        return await _finished(self._in_turn(self._write(body)))

    async def apply(self, body: Callable[[Connection], R]) -> R:
        if self._autocommit is None:
            return await self.write(body)
        return await _finished(self._in_turn(self._read(body)))

    async def read(self, body: Callable[[Connection], R]) -> R:
        return await _finished(self._in_turn(self._read(body)))

    async def _write(self, body: Callable[[Connection], R]) -> R:
        async with self._engine.begin() as connection:
            return await connection.run_sync(body)

    async def _read(self, body: Callable[[Connection], R]) -> R:
        async with (self._autocommit or self._engine).connect() as connection:
            return await connection.run_sync(body)

    async def _in_turn(self, work: Awaitable[R]) -> R:
        if self._turns is None:
            return await work
        async with self._turns:
            return await work

    async def close(self) -> None:
        """The engine belongs to the App, which disposes of it."""


class ThreadedSqliteTransactions:
    """Bodies run on the sqlite3 driver in worker threads, each call one hand-off."""

    def __init__(self, engine: Engine, workers: int = SQLITE_WORKERS) -> None:
        self._engine = engine
        self._threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cs-sqlite")

    @classmethod
    def open(
        cls,
        url: URL,
        *,
        busy_timeout_s: float,
        on_connect: Callable[[Any, Any], None],
        workers: int = SQLITE_WORKERS,
    ) -> ThreadedSqliteTransactions:
        """A synchronous engine on the SQLite file of ``url``, with the pragmas ``on_connect``
        sets, and ``workers`` threads (and connections)."""
        engine = create_sync_engine(
            url.set(drivername="sqlite+pysqlite"),
            pool_size=workers,
            max_overflow=0,
            connect_args={
                "check_same_thread": False,  # a pooled connection serves whichever worker asks
                "timeout": busy_timeout_s,
            },
        )
        event.listen(engine, "connect", on_connect)
        return cls(engine, workers)

    async def write(self, body: Callable[[Connection], R]) -> R:
        return await self._hand_off(functools.partial(_in_transaction, self._engine, body))

    async def apply(self, body: Callable[[Connection], R]) -> R:
        return await self.write(body)

    async def read(self, body: Callable[[Connection], R]) -> R:
        return await self._hand_off(functools.partial(_on_connection, self._engine, body))

    async def _hand_off(self, call: Callable[[], R]) -> R:
        return await _finished(asyncio.get_running_loop().run_in_executor(self._threads, call))

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._shut_down)

    def _shut_down(self) -> None:
        self._threads.shutdown(wait=True)
        self._engine.dispose()


async def _finished(work: Awaitable[R]) -> R:
    """Run a store call to its end even if its caller is cancelled.

    A launch cancels its running branches; a cancellation that lands inside a transaction makes
    SQLAlchemy invalidate the connection mid-statement (an in-memory SQLite database is then
    gone). A store call is short, so it finishes and its caller sees the cancellation after.
    """
    return await asyncio.shield(work)


def _in_transaction(engine: Engine, body: Callable[[Connection], R]) -> R:
    with engine.begin() as connection:
        return body(connection)


def _on_connection(engine: Engine, body: Callable[[Connection], R]) -> R:
    with engine.connect() as connection:
        return body(connection)
