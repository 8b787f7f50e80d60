"""LangGraph's checkpointer beside our tables: SQLite file, in memory, or PostgreSQL.

Each comes with ``sample``: a few of its stored values, read on its own connection, for the
start's check that the key ring opens them (``bot.security.key_check``)."""

from __future__ import annotations

import select
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import SerializerProtocol

from bot.runtime.sqlite_saver import ThreadedSqliteSaver
from bot.security.key_check import Sampler, SealedValue, checkpoint_samples
from bot.store.database import IDLE_PING_SECONDS, DatabaseUrl, checkpoint_path
from bot.store.new_threads import NewThreads


@dataclass(slots=True)
class OpenCheckpointer:
    saver: BaseCheckpointSaver[Any]
    close: Callable[[], Awaitable[None]]
    sample: Sampler = field(default_factory=lambda: _no_samples)
    """A few stored values (the first and last row of each table); none in memory (a random
    key, as new as the saver), and on PostgreSQL the database's own sampler reads them."""
    new_threads: NewThreads | None = None
    """The threads the saver answers a first read of itself (``bot.store.new_threads``); none
    in memory (a read there costs no round trip)."""


async def _nothing() -> None:
    return None


async def _no_samples() -> list[SealedValue]:
    return []


async def open_checkpointer(
    database_url: DatabaseUrl, *, serde: SerializerProtocol | None = None
) -> OpenCheckpointer:
    """The saver of ``database_url``; ``serde`` (e.g. an encrypting one) is given to every saver."""
    if database_url.is_sqlite:
        path = database_url.sqlite_path
        if path is None:
            return OpenCheckpointer(saver=InMemorySaver(serde=serde), close=_nothing)
        saver = await ThreadedSqliteSaver.open(checkpoint_path(path), serde=serde)
        saver.new_threads = NewThreads()
        return OpenCheckpointer(
            saver=saver, close=saver.close, sample=_sampler(saver), new_threads=saver.new_threads
        )
    return await _open_postgres(database_url, serde)


def _sampler(saver: ThreadedSqliteSaver) -> Sampler:
    return lambda: checkpoint_samples(saver.fetch_one, sqlite=True)


PSYCOPG_OPTIONS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}


async def _open_postgres(
    database_url: DatabaseUrl, serde: SerializerProtocol | None
) -> OpenCheckpointer:
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    # every channel value goes through the serde (the plain saver keeps str/int/float inline)
    from bot.security.postgres_saver import SealedPostgresSaver

    # the URL's parts as libpq's keywords: never rendered back into a string with its password
    idle = PingWhenIdle()
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        "",
        min_size=1,
        max_size=10,
        open=False,
        kwargs={**database_url.libpq_parameters(), **PSYCOPG_OPTIONS, "row_factory": dict_row},
        # a connection the server closed (a restart) is found out before it is handed out,
        # as the store's pool pings its idle ones: else the pass it is given fails
        check=idle.check,
    )
    await pool.open(wait=True)
    saver = SealedPostgresSaver(pool, serde=serde)
    saver.new_threads = NewThreads()
    await saver.setup()
    return OpenCheckpointer(saver=saver, close=pool.close, new_threads=saver.new_threads)


class PingWhenIdle:
    """The checkpointer pool's check, a round trip only when it may be needed.

    A connection is pinged before it is handed out when it was last handed out longer than
    ``IDLE_PING_SECONDS`` ago (or never), as the store's engine pings one idle that long
    (``bot.store.database``), or when the server has said something on it since: a server
    that restarts, or ends the connection, first closes its socket (``57P01`` then EOF), which
    makes it readable. One used moments ago and silent is handed out as it is. psycopg_pool's
    own ``check_connection`` pinged every check-out: about 12 round trips per pause cycle on
    the server too (issue 32).

    The time is counted from the last check-out, not from the return: it is never shorter than
    the idle time, so it pings no less often, and the pool needs no ``reset`` hook, with which
    psycopg_pool hands every returned connection to its worker task (a queue and a task switch
    per checkpointer call) instead of putting it back at once."""

    def __init__(self, idle_seconds: float | None = None) -> None:
        from psycopg_pool import AsyncConnectionPool  # made only for a PostgreSQL pool

        self._idle_seconds = IDLE_PING_SECONDS if idle_seconds is None else idle_seconds
        self._handed_out: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        self._ping = AsyncConnectionPool.check_connection

    async def check(self, connection: Any) -> None:
        now = time.monotonic()
        last = self._handed_out.get(connection)
        if last is None or now - last > self._idle_seconds or _heard_from(connection):
            await self._ping(connection)
        self._handed_out[connection] = now


def _heard_from(connection: Any) -> bool:
    """Whether the server sent anything (an error, its end of the socket) on an idle
    connection; yes when that cannot be told (closed, no poll)."""
    if connection.closed or connection.broken:
        return True
    try:
        poller = select.poll()
        poller.register(connection.pgconn.socket, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))
    except Exception:  # psycopg's OperationalError on a closed socket, no poll: ping
        return True
