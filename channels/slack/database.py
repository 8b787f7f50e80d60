"""Where the bot's Slack state lives, and how its statements reach it.

Slack's own state (seen events, requester notes; its message references are the App store's,
``App.message_refs``) lives in the App's one ``Database`` so that several instances on
PostgreSQL, or restarts on a SQLite file, see the same state. Its statements run on the App's
transactions (``bot.store.transactions``): on a SQLite file in worker threads, never through
aiosqlite. Through aiosqlite, under Slack's retries, the
event-dedup insert waited on a write lock held by a transaction that needed the blocked event
loop to commit (issue 13): all froze until the 30 s busy timeout, then answered 500 "database is
locked" (``tests/benchmarks/slack_events_retries.py``). In a worker thread a wait on the file
blocks that thread only.

Two sets of transactions: ``state`` (the App's own) and ``dedup`` for the Events API ids, whose
busy timeout on a SQLite file is short: Slack gives up on a request after 3 s, so a busy
database is answered quickly with a status Slack retries (see ``SeenEvents``). The Slack tables
(``channels.slack.schema``) are migrated before the first statement of either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Final, TypeVar

from sqlalchemy import Connection

from bot.core.clock import Clock
from bot.store.database import Database
from bot.store.transactions import Transactions
from channels.slack.schema import migrate_slack

R = TypeVar("R")

DEDUP_BUSY_TIMEOUT: Final = timedelta(seconds=2)
"""How long the dedup insert waits for SQLite's write lock before the event is answered 503."""


class SlackDatabase:
    """The Slack state's transactions; ``close`` releases what the bot opened (not the App's)."""

    def __init__(
        self, *, state: Transactions, dedup: Transactions, own: Transactions | None
    ) -> None:
        self.state = state
        self.dedup = dedup
        self._own = own

    @classmethod
    def open(cls, database: Database, clock: Clock) -> SlackDatabase:
        ready = _Migration(clock)
        own = database.threaded(DEDUP_BUSY_TIMEOUT)  # a SQLite file: a short busy timeout
        return cls(
            state=_MigratedFirst(database.transactions, ready),
            dedup=_MigratedFirst(own or database.transactions, ready),
            own=own,
        )

    async def close(self) -> None:
        if self._own is not None:
            await self._own.close()


class _Migration:
    """The Slack tables' migrations, run once before the first statement."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = asyncio.Lock()
        self.done = False

    async def run(self, transactions: Transactions) -> None:
        async with self._lock:
            if not self.done:
                now = self._clock.now()
                await transactions.write(lambda connection: migrate_slack(connection, now))
                self.done = True


class _MigratedFirst:
    """Transactions that bring the Slack tables up to date before their first statement."""

    def __init__(self, inner: Transactions, migration: _Migration) -> None:
        self._inner = inner
        self._migration = migration

    async def write(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        await self._ready()
        return await self._inner.write(body, short=short)

    async def apply(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        await self._ready()
        return await self._inner.apply(body, short=short)

    async def read(self, body: Callable[[Connection], R], *, short: bool = False) -> R:
        await self._ready()
        return await self._inner.read(body, short=short)

    async def _ready(self) -> None:
        if not self._migration.done:
            await self._migration.run(self._inner)

    async def close(self) -> None:
        """The inner transactions belong to the App or to ``SlackDatabase``."""
