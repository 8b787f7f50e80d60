"""The engine and the schema: SQLite (embedded default) or PostgreSQL, migrations in order."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import Connection, Index, Table, event, func, insert, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, DisconnectionError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from bot.store.tables import executions, metadata, pause_answers, pauses, schema_version
from bot.store.transactions import (
    AsyncEngineTransactions,
    ThreadedSqliteTransactions,
    Transactions,
)

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///countersign.db"
POSTGRES_EXAMPLE = "postgresql+asyncpg://user@host:5432/countersign"
SUPPORTED_DATABASES = (
    f"use SQLite ({DEFAULT_DATABASE_URL}) or PostgreSQL ({POSTGRES_EXAMPLE}), "
    "the only databases supported"
)
SQLITE_BUSY_TIMEOUT_MS = 30_000


def checkpoint_path(database: Path) -> Path:
    """The checkpoint file beside the database (``x.db`` → ``x.checkpoints.db``)."""
    return database.with_name(f"{database.stem}.checkpoints{database.suffix or '.db'}")


def database_url_problem(url: str) -> str | None:
    """What is wrong with a database URL, for people (what to write instead); None if usable.

    Only the async drivers are served: SQLAlchemy's default drivers (``postgresql://`` is
    psycopg2, ``sqlite://`` pysqlite) block the event loop, and psycopg2 is not installed.
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        return f"not a database URL: {SUPPORTED_DATABASES}"
    backend, _, driver = parsed.drivername.partition("+")
    if backend in ("postgres", "postgresql"):
        if driver == "asyncpg":
            return None
        return (
            f"{parsed.drivername}:// is not served (it needs the async driver): "
            f"write postgresql+asyncpg:// (e.g. {POSTGRES_EXAMPLE})"
        )
    if backend == "sqlite":
        if driver == "aiosqlite":
            return None
        return (
            f"{parsed.drivername}:// is not served (it needs the async driver): "
            f"write sqlite+aiosqlite:/// (e.g. {DEFAULT_DATABASE_URL})"
        )
    return f"{backend} is not supported: {SUPPORTED_DATABASES}"


def database_failure(error: BaseException) -> str | None:
    """Why a database could not be opened, in one line; None if ``error`` is no such failure.

    asyncpg raises its own errors while connecting (unwrapped by SQLAlchemy); the rest come
    wrapped (``DBAPIError.orig``) or as ``OSError`` (refused connection, unreadable file).
    """
    if isinstance(error, DBAPIError) and error.orig is not None:
        error = error.orig
    elif not isinstance(error, (SQLAlchemyError, OSError, sqlite3.Error, asyncpg.PostgresError)):
        return None
    return " ".join(str(error).split()) or type(error).__name__


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL, or None for an in-memory database."""
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        return None
    return Path(database)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def create_engine(url: str) -> AsyncEngine:
    """An async engine; SQLite gets WAL and a busy timeout; in-memory SQLite one connection."""
    if is_sqlite(url):
        if sqlite_path(url) is None:
            engine = create_async_engine(
                url, poolclass=StaticPool, connect_args={"check_same_thread": False}
            )
        else:
            engine = create_async_engine(
                url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
            )
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_async_engine(url, pool_size=10, max_overflow=20)
    _ping_when_idle(engine)
    return engine


IDLE_PING_SECONDS = 10.0
"""A pooled connection unused for longer is pinged before use (a server restart or a network
timeout may have closed it meanwhile); a busy pool pays nothing. SQLAlchemy's ``pool_pre_ping``
pings before every use: one more round trip per transaction, 0.4 ms of a 1 ms store call."""


def _ping_when_idle(engine: AsyncEngine) -> None:
    dialect = engine.dialect

    def checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        idle_since = record.info.get(_IDLE_SINCE)
        if idle_since is None or time.monotonic() - idle_since <= IDLE_PING_SECONDS:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as error:
            # the pool drops this connection and checks out another (SQLAlchemy's recipe)
            raise DisconnectionError("a pooled connection was closed while idle") from error

    event.listen(engine.sync_engine, "checkin", checkin)
    event.listen(engine.sync_engine, "checkout", checkout)


_IDLE_SINCE = "countersign_idle_since"


Migration = Callable[[Connection], None]

SCHEMA_LOCK = 727001
"""The PostgreSQL advisory lock every schema step takes, ours and LangGraph's saver's
(``bot.security.postgres_saver``): instances starting at once on a new database take turns.

It is *tried* (``pg_try_advisory_*``) until it is had, never waited for: LangGraph's setup runs
``CREATE INDEX CONCURRENTLY``, which waits for every open transaction to end, and a session
blocked on the lock is one (it would wait for the holder, the holder for it: a deadlock
PostgreSQL does not detect). Between two tries a waiting instance has no transaction open."""
SCHEMA_LOCK_RETRY_SECONDS = 0.05


def _v1_initial(connection: Connection) -> None:
    metadata.create_all(connection, checkfirst=True)


def _add_missing_columns(
    connection: Connection, table: Table, names: Sequence[str], indexes: Sequence[Index] = ()
) -> None:
    """Add ``table``'s columns ``names`` where they are missing (a database made by v1 before
    they existed; one made since has them from ``create_all``), and the indexes."""
    present = {column["name"] for column in inspect(connection).get_columns(table.name)}
    for name in names:
        if name in present:
            continue
        column = table.c[name]
        kind = column.type.compile(dialect=connection.dialect)
        connection.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {name} {kind}"))
    for index in indexes:
        index.create(connection, checkfirst=True)


def _v2_ask_order_and_deadlines(connection: Connection) -> None:
    """The order of a model turn's calls, what an approved tool ran with, quorum deadlines."""
    _add_missing_columns(
        connection,
        pauses,
        ["ask_position", "closes_at"],
        [i for i in pauses.indexes if i.name == "ix_cs_pauses_status_closes"],
    )
    _add_missing_columns(connection, pause_answers, ["ask_position", "ran_with"])


def _v3_unread_replies(connection: Connection) -> None:
    """Replies received before the ack and read after it."""
    _add_missing_columns(
        connection,
        pauses,
        ["unread_reply", "unread_by", "unread_at"],
        [i for i in pauses.indexes if i.name == "ix_cs_pauses_status_unread"],
    )


MIGRATIONS: Sequence[Migration] = (_v1_initial, _v2_ask_order_and_deadlines, _v3_unread_replies)
"""Applied in order; version N is ``MIGRATIONS[N - 1]``. Never edit one that has shipped."""


def apply_migrations(
    connection: Connection, versions: Table, migrations: Sequence[Migration], now: datetime
) -> int:
    """Apply the ``migrations`` newer than the version ``versions`` records (version N is
    ``migrations[N - 1]``), each recorded as applied; returns the newest version."""
    versions.create(connection, checkfirst=True)
    current = connection.execute(select(func.max(versions.c.version))).scalar() or 0
    for version, migrate in enumerate(migrations, start=1):
        if version > current:
            migrate(connection)
            connection.execute(insert(versions).values(version=version, applied_at=now))
    return len(migrations)


def _apply_migrations(connection: Connection, now: datetime) -> int:
    return apply_migrations(connection, schema_version, MIGRATIONS, now)


async def until_taken(try_lock: Callable[[], Awaitable[bool]]) -> None:
    """Try ``try_lock`` until it says the lock is had (see ``SCHEMA_LOCK``: never wait on it)."""
    while True:
        if await try_lock():
            return
        await asyncio.sleep(SCHEMA_LOCK_RETRY_SECONDS)


async def migrate(engine: AsyncEngine, now: datetime) -> int:
    """Bring the schema to the newest version; idempotent. Returns the version.

    On PostgreSQL one instance migrates at a time (``SCHEMA_LOCK``); the others find nothing to
    do once it is their turn.
    """
    if engine.dialect.name != "postgresql":
        async with engine.begin() as connection:
            return await connection.run_sync(_apply_migrations, now)
    version = 0

    async def try_to_migrate() -> bool:
        nonlocal version
        async with engine.begin() as connection:
            lock = f"SELECT pg_try_advisory_xact_lock({SCHEMA_LOCK})"
            if not (await connection.exec_driver_sql(lock)).scalar():
                return False  # the transaction ends here: nothing open while it waits
            version = await connection.run_sync(_apply_migrations, now)
            return True

    await until_taken(try_to_migrate)
    return version


async def holds_rows(engine: AsyncEngine) -> bool:
    """Whether any execution is stored (every encrypted row belongs to one)."""
    async with engine.connect() as connection:
        found = await connection.execute(select(executions.c.execution_id).limit(1))
        return found.first() is not None


def open_transactions(engine: AsyncEngine) -> Transactions:
    """How the store runs its transactions on ``engine``'s database (see ``transactions``);
    close it before disposing of the engine."""
    url = engine.url.render_as_string(hide_password=False)
    if not is_sqlite(url):
        return AsyncEngineTransactions(engine)
    if sqlite_path(url) is None:
        return AsyncEngineTransactions(engine, one_connection=True)
    return ThreadedSqliteTransactions.open(
        engine, busy_timeout_s=SQLITE_BUSY_TIMEOUT_MS / 1000, on_connect=_sqlite_pragmas
    )
