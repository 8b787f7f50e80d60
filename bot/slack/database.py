"""Where the bot's Slack state lives: the App's database, or a private one for in-memory SQLite.

Slack state (``cs_slack_messages``, ``cs_slack_events``) shares the App's database so that
several instances on PostgreSQL, or restarts on a SQLite file, see the same references. An
in-memory SQLite database is one connection the runtime's store takes turns on; the bot then
keeps its own in-memory database (the tables are independent), migrated on first use, its
calls taking turns too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.app import App
from bot.core.clock import Clock
from bot.store.database import create_engine, is_sqlite, migrate, sqlite_path

PRIVATE_URL: Final = "sqlite+aiosqlite:///:memory:"


class SlackDatabase:
    def __init__(self, app_engine: AsyncEngine, clock: Clock) -> None:
        url = app_engine.url.render_as_string(hide_password=False)
        self._private = is_sqlite(url) and sqlite_path(url) is None
        self._engine = create_engine(PRIVATE_URL) if self._private else app_engine
        self._turns = asyncio.Lock() if self._private else None
        self._migrated = not self._private
        self._clock = clock

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[AsyncConnection]:
        async with self._turn(), self._engine.connect() as connection:
            yield connection

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[AsyncConnection]:
        async with self._turn(), self._engine.begin() as connection:
            yield connection

    @asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        if self._turns is None:
            yield
            return
        async with self._turns:
            if not self._migrated:
                await migrate(self._engine, self._clock.now())
                self._migrated = True
            yield

    async def close(self) -> None:
        """Release the private database (the App's is the App's to close)."""
        if self._private:
            await self._engine.dispose()


def engine_of(app: App) -> AsyncEngine:
    """The App's database engine, so Slack state lives in the App's database."""
    return app.sql_engine
