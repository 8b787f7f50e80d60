"""The engine and the schema: SQLite (embedded default) or PostgreSQL, migrations in order."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Index, Table, event, func, insert, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from bot.store.tables import metadata, pause_answers, pauses, schema_version
from bot.store.transactions import (
    AsyncEngineTransactions,
    ThreadedSqliteTransactions,
    Transactions,
)

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///countersign.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000


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


MIGRATIONS: Sequence[Migration] = (_v1_initial, _v2_ask_order_and_deadlines)
"""Applied in order; version N is ``MIGRATIONS[N - 1]``. Never edit one that has shipped."""


def _apply_migrations(connection: Connection, now: datetime) -> int:
    schema_version.create(connection, checkfirst=True)
    current = connection.execute(select(func.max(schema_version.c.version))).scalar() or 0
    for version, migrate in enumerate(MIGRATIONS, start=1):
        if version <= current:
            continue
        migrate(connection)
        connection.execute(insert(schema_version).values(version=version, applied_at=now))
    return len(MIGRATIONS)


async def migrate(engine: AsyncEngine, now: datetime) -> int:
    """Bring the schema to the newest version; idempotent. Returns the version."""
    async with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            # one instance migrates at a time; the others wait and then find nothing to do
            await connection.exec_driver_sql("SELECT pg_advisory_xact_lock(727001)")
        return await connection.run_sync(_apply_migrations, now)


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
