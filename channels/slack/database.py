"""Where the bot's Slack state lives, and how its statements reach it.

Slack state (``cs_slack_messages``, ``cs_slack_events``) shares the App's database so that
several instances on PostgreSQL, or restarts on a SQLite file, see the same references. Its
statements run as the runtime's store runs its own (``bot.store.transactions``):

- **A SQLite file**: on SQLite's own driver in worker threads, never through aiosqlite.
  Through aiosqlite, under Slack's retries, the event-dedup insert waited on a write lock held
  by a transaction that needed the blocked event loop to commit (issue 13: a leftover sqlite3
  cursor freed by the garbage collector on the loop): all froze until the 30 s busy timeout,
  then answered 500 "database is locked" (``tests/benchmarks/slack_events_retries.py``: 237 of
  400 requests, ``/healthz`` stuck 30 s). In a worker thread a wait on the file blocks that
  thread only.
- **PostgreSQL**: through the App's async engine (asyncpg needs no thread).
- **In-memory SQLite**: the runtime's store takes turns on its one connection, so the bot keeps
  an in-memory database of its own (the tables are independent), migrated before its first use.

Two sets of transactions: ``state`` for the message references (the App's busy timeout) and
``dedup`` for the Events API ids, whose busy timeout is short: Slack gives up on a request after
3 s, so a busy database is answered quickly with a status Slack retries (see ``SeenEvents``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Final, TypeVar

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.app import App
from bot.core.clock import Clock
from bot.store.database import (
    SQLITE_BUSY_TIMEOUT_MS,
    create_engine,
    is_sqlite,
    migrate,
    sqlite_path,
)
from bot.store.transactions import (
    AsyncEngineTransactions,
    ThreadedSqliteTransactions,
    Transactions,
)

R = TypeVar("R")

PRIVATE_URL: Final = "sqlite+aiosqlite:///:memory:"
STATE_BUSY_TIMEOUT: Final = timedelta(milliseconds=SQLITE_BUSY_TIMEOUT_MS)
DEDUP_BUSY_TIMEOUT: Final = timedelta(seconds=2)
"""How long the dedup insert waits for SQLite's write lock before the event is answered 503."""


class SlackDatabase:
    """The Slack state's transactions; ``close`` releases what the bot opened (not the App's)."""

    def __init__(self, *, state: Transactions, dedup: Transactions) -> None:
        self.state = state
        self.dedup = dedup

    @classmethod
    def open(cls, app_engine: AsyncEngine, clock: Clock) -> SlackDatabase:
        url = app_engine.url.render_as_string(hide_password=False)
        if not is_sqlite(url):
            shared = AsyncEngineTransactions(app_engine)
            return cls(state=shared, dedup=shared)
        if sqlite_path(url) is None:
            private = _MigratedFirst(create_engine(PRIVATE_URL), clock)
            return cls(state=private, dedup=private)
        return cls(
            state=_threaded(app_engine, STATE_BUSY_TIMEOUT),
            dedup=_threaded(app_engine, DEDUP_BUSY_TIMEOUT),
        )

    async def close(self) -> None:
        await self.state.close()
        if self.dedup is not self.state:
            await self.dedup.close()


def engine_of(app: App) -> AsyncEngine:
    """The App's database engine, so Slack state lives in the App's database."""
    return app.sql_engine


def _threaded(app_engine: AsyncEngine, busy_timeout: timedelta) -> ThreadedSqliteTransactions:
    """Worker threads on the App's SQLite file, with the App's pragmas and ``busy_timeout``."""
    return ThreadedSqliteTransactions.open(
        app_engine,
        busy_timeout_s=busy_timeout.total_seconds(),
        on_connect=_pragmas(busy_timeout),
    )


def _pragmas(busy_timeout: timedelta) -> Callable[[Any, Any], None]:
    milliseconds = int(busy_timeout.total_seconds() * 1000)

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={milliseconds}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    return on_connect


class _MigratedFirst:
    """The bot's own in-memory database: one connection taking turns, migrated on first use."""

    def __init__(self, engine: AsyncEngine, clock: Clock) -> None:
        self._engine = engine
        self._clock = clock
        self._inner = AsyncEngineTransactions(engine, one_connection=True)
        self._migration = asyncio.Lock()
        self._migrated = False

    async def write(self, body: Callable[[Connection], R]) -> R:
        await self._migrate_once()
        return await self._inner.write(body)

    async def apply(self, body: Callable[[Connection], R]) -> R:
        await self._migrate_once()
        return await self._inner.apply(body)

    async def read(self, body: Callable[[Connection], R]) -> R:
        await self._migrate_once()
        return await self._inner.read(body)

    async def _migrate_once(self) -> None:
        if self._migrated:
            return
        async with self._migration:
            if not self._migrated:
                await migrate(self._engine, self._clock.now())
                self._migrated = True

    async def close(self) -> None:
        await self._engine.dispose()
