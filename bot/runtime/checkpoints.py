"""LangGraph's checkpointer beside our tables: SQLite file, in memory, or PostgreSQL."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from sqlalchemy.engine import make_url

from bot.store.database import SQLITE_BUSY_TIMEOUT_MS, checkpoint_path, is_sqlite, sqlite_path


@dataclass(slots=True)
class OpenCheckpointer:
    saver: BaseCheckpointSaver[Any]
    close: Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


async def open_checkpointer(
    database_url: str, *, serde: SerializerProtocol | None = None
) -> OpenCheckpointer:
    """The saver of ``database_url``; ``serde`` (e.g. an encrypting one) is given to every saver."""
    if is_sqlite(database_url):
        path = sqlite_path(database_url)
        if path is None:
            return OpenCheckpointer(saver=InMemorySaver(serde=serde), close=_nothing)
        connection = await aiosqlite.connect(str(checkpoint_path(path)))
        await connection.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        saver = AsyncSqliteSaver(connection, serde=serde)
        await saver.setup()
        return OpenCheckpointer(saver=saver, close=connection.close)
    return await _open_postgres(database_url, serde)


def psycopg_conninfo(database_url: str) -> str:
    """The libpq form of a SQLAlchemy URL (``postgresql+asyncpg://`` → ``postgresql://``)."""
    url = make_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


async def _open_postgres(database_url: str, serde: SerializerProtocol | None) -> OpenCheckpointer:
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    # every channel value goes through the serde (the plain saver keeps str/int/float inline)
    from bot.security.postgres_saver import SealedPostgresSaver

    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        psycopg_conninfo(database_url),
        min_size=1,
        max_size=10,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True)
    saver = SealedPostgresSaver(pool, serde=serde)
    await saver.setup()
    return OpenCheckpointer(saver=saver, close=pool.close)
