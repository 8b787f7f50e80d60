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

from bot.store.database import SQLITE_BUSY_TIMEOUT_MS, DatabaseUrl, checkpoint_path


@dataclass(slots=True)
class OpenCheckpointer:
    saver: BaseCheckpointSaver[Any]
    close: Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


async def open_checkpointer(
    database_url: DatabaseUrl, *, serde: SerializerProtocol | None = None
) -> OpenCheckpointer:
    """The saver of ``database_url``; ``serde`` (e.g. an encrypting one) is given to every saver."""
    if database_url.is_sqlite:
        path = database_url.sqlite_path
        if path is None:
            return OpenCheckpointer(saver=InMemorySaver(serde=serde), close=_nothing)
        connection = await aiosqlite.connect(str(checkpoint_path(path)))
        await connection.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        saver = AsyncSqliteSaver(connection, serde=serde)
        await saver.setup()
        return OpenCheckpointer(saver=saver, close=connection.close)
    return await _open_postgres(database_url, serde)


PSYCOPG_OPTIONS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}


async def _open_postgres(
    database_url: DatabaseUrl, serde: SerializerProtocol | None
) -> OpenCheckpointer:
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    # every channel value goes through the serde (the plain saver keeps str/int/float inline)
    from bot.security.postgres_saver import SealedPostgresSaver

    # the URL's parts as libpq's keywords: never rendered back into a string with its password
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        "",
        min_size=1,
        max_size=10,
        open=False,
        kwargs={**database_url.libpq_parameters(), **PSYCOPG_OPTIONS, "row_factory": dict_row},
    )
    await pool.open(wait=True)
    saver = SealedPostgresSaver(pool, serde=serde)
    await saver.setup()
    return OpenCheckpointer(saver=saver, close=pool.close)
