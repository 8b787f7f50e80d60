"""The one database: its URL (parsed once), its engine and the transactions every table uses.

``Database.open(url)`` is the only way the application reaches its database: the store, the
tree leases, the ledger of model calls, the channels' state and the key source all take the
``Database`` (or its ``DatabaseUrl``), so the URL is parsed in one place and never turned back
into a string with its password. SQLite (the embedded default) or PostgreSQL.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import asyncpg
from sqlalchemy import URL, Connection, event, literal, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, DisconnectionError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from bot.store.migrations import migrate
from bot.store.tables import executions
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
SQLITE_WAL_PAGES = 256
"""A SQLite write-ahead log is checkpointed into its database once it holds this many pages
(1 MiB of 4 KiB pages; SQLite's default, 1,000, let each log sit at about 4 MB)."""
SQLITE_WAL_LIMIT_BYTES = 1 << 20
"""What a write-ahead log is cut back to after a checkpoint (SQLite keeps the file's size
otherwise, however large a burst made it)."""
SQLITE_WAL_PRAGMAS = (
    f"PRAGMA wal_autocheckpoint={SQLITE_WAL_PAGES}",
    f"PRAGMA journal_size_limit={SQLITE_WAL_LIMIT_BYTES}",
)
"""The write-ahead log's bounds, set on every connection to a SQLite file (the store's and the
checkpointer's): each log stays near 1 MiB, where it sat at 4 MB (a dozen executions filled a
5 MB disk)."""


def checkpoint_path(database: Path) -> Path:
    """The checkpoint file beside the database (``x.db`` → ``x.checkpoints.db``)."""
    return database.with_name(f"{database.stem}.checkpoints{database.suffix or '.db'}")


class DatabaseUrlError(ValueError):
    """Not a database URL (the text is not repeated: it may hold a password)."""


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """A database URL, parsed once (``parse``); its ``repr`` hides the password."""

    url: URL

    @classmethod
    def parse(cls, text: str) -> DatabaseUrl:
        """The one place a database URL is parsed; ``DatabaseUrlError`` if it is none."""
        try:
            return cls(make_url(text))
        except (ArgumentError, ValueError):  # ValueError: a port that is not a number
            raise DatabaseUrlError(f"not a database URL: {SUPPORTED_DATABASES}") from None

    @classmethod
    def checked(cls, text: str) -> DatabaseUrl:
        """``parse``, and ``DatabaseUrlError`` saying what to write instead unless usable."""
        url = cls.parse(text)
        if url.problem is not None:
            raise DatabaseUrlError(url.problem)
        return url

    @classmethod
    def of(cls, url: str | DatabaseUrl) -> DatabaseUrl:
        return url if isinstance(url, DatabaseUrl) else cls.parse(url)

    @classmethod
    def sqlite_file(cls, path: Path) -> DatabaseUrl:
        return cls(URL.create("sqlite+aiosqlite", database=str(path)))

    def __repr__(self) -> str:
        return f"DatabaseUrl({self.shown!r})"

    @property
    def shown(self) -> str:
        """The URL for people: its password hidden."""
        return self.url.render_as_string(hide_password=True)

    @property
    def is_sqlite(self) -> bool:
        return self.url.get_backend_name() == "sqlite"

    @property
    def sqlite_path(self) -> Path | None:
        """The file of a SQLite database; None for an in-memory one or PostgreSQL."""
        database = self.url.database
        if not self.is_sqlite or not database:
            return None
        if database == ":memory:" or database.startswith("file::memory:"):
            return None
        if database.startswith("file:") and self.url.query.get("uri") == "true":
            return Path(database.removeprefix("file:"))  # a URI filename (``?mode=ro&uri=true``)
        return Path(database)

    @property
    def in_memory(self) -> bool:
        return self.is_sqlite and self.sqlite_path is None

    @property
    def problem(self) -> str | None:
        """What is wrong with this URL, for people (what to write instead); None if usable.

        Only the async drivers are served: SQLAlchemy's default drivers (``postgresql://`` is
        psycopg2, ``sqlite://`` pysqlite) block the event loop, and psycopg2 is not installed.
        """
        backend, _, driver = self.url.drivername.partition("+")
        if backend in ("postgres", "postgresql"):
            if driver == "asyncpg":
                return None
            return (
                f"{self.url.drivername}:// is not served (it needs the async driver): "
                f"write postgresql+asyncpg:// (e.g. {POSTGRES_EXAMPLE})"
            )
        if backend == "sqlite":
            if driver == "aiosqlite":
                return None
            return (
                f"{self.url.drivername}:// is not served (it needs the async driver): "
                f"write sqlite+aiosqlite:/// (e.g. {DEFAULT_DATABASE_URL})"
            )
        return f"{backend} is not supported: {SUPPORTED_DATABASES}"

    def libpq_parameters(self) -> dict[str, Any]:
        """A PostgreSQL URL as libpq's keyword parameters (for psycopg), never as one string."""
        parameters: dict[str, Any] = {
            "host": self.url.host,
            "port": self.url.port,
            "user": self.url.username,
            "password": self.url.password,
            "dbname": self.url.database,
            **self.url.query,
        }
        return {name: value for name, value in parameters.items() if value is not None}


def database_url_problem(url: str | DatabaseUrl) -> str | None:
    """What is wrong with a database URL, for people; None if usable."""
    try:
        return DatabaseUrl.of(url).problem
    except DatabaseUrlError as error:
        return str(error)


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


class Database:
    """The application's database: URL, engine and transactions, opened once, closed once.

    ``async with Database.open(url) as database:`` or ``close()`` (repeatable). ``transactions``
    is where every table's statements run (``bot.store.transactions``).
    """

    def __init__(self, url: DatabaseUrl, engine: AsyncEngine, transactions: Transactions) -> None:
        self.url = url
        self.engine = engine
        self.transactions = transactions
        self._closed = False
        self._probe: Transactions | None = None

    @classmethod
    def open(cls, url: str | DatabaseUrl) -> Database:
        """Opens nothing yet: connections are made on first use (``migrate`` is a good one)."""
        parsed = DatabaseUrl.of(url)
        engine = create_engine(parsed)
        return cls(parsed, engine, _open_transactions(parsed, engine))

    def __repr__(self) -> str:
        return f"Database({self.url!r})"

    @property
    def is_sqlite(self) -> bool:
        return self.url.is_sqlite

    @property
    def sqlite_path(self) -> Path | None:
        return self.url.sqlite_path

    async def migrate(self, now: datetime) -> int:
        """Bring the schema to the newest version (``bot.store.migrations``); idempotent."""
        return await migrate(self.engine, now)

    async def holds_rows(self) -> bool:
        """Whether any execution is stored (every encrypted row belongs to one)."""
        statement = select(executions.c.execution_id).limit(1)
        found = await self.transactions.read(lambda c: c.execute(statement).first())
        return found is not None

    async def problem(self) -> str | None:
        """Why the database cannot serve now (closed, unreachable, or a SQLite file that cannot
        be written), or None: one ``SELECT 1``; on a SQLite file, its disk's free space and
        one write (``sqlite_write_problem``): reads go on working on a full disk."""
        if self._closed:
            return "closed"
        path = self.sqlite_path
        try:
            await self.transactions.read(lambda c: c.execute(select(literal(1))).scalar())
            if path is not None:
                return await self._write_probe(path).write(
                    lambda connection: sqlite_write_problem(connection, path)
                )
        except Exception as error:  # any failure of the driver is the answer here
            return database_failure(error) or f"{type(error).__name__}: {error}"
        return None

    def _write_probe(self, path: Path) -> Transactions:
        """The write ``problem`` tries on a SQLite file: a thread and a connection of its own,
        waiting at most ``PROBE_BUSY_TIMEOUT`` for the write lock (a probe kept waiting by a
        long writer holds none of the store's threads, and says the database is locked)."""
        if self._probe is None:
            self._probe = ThreadedSqliteTransactions.open(
                self.url.url,
                busy_timeout_s=PROBE_BUSY_TIMEOUT.total_seconds(),
                on_connect=sqlite_pragmas(PROBE_BUSY_TIMEOUT),
                workers=1,
            )
        return self._probe

    def threaded(self, busy_timeout: timedelta) -> Transactions | None:
        """More worker-thread transactions on a SQLite file, waiting at most ``busy_timeout``
        for SQLite's write lock (close them); None on any other database."""
        if self.sqlite_path is None:
            return None
        return ThreadedSqliteTransactions.open(
            self.url.url,
            busy_timeout_s=busy_timeout.total_seconds(),
            on_connect=sqlite_pragmas(busy_timeout),
        )

    async def close(self) -> None:
        """Close the transactions, then dispose of the engine; repeatable."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._probe is not None:
                await self._probe.close()
            await self.transactions.close()
        finally:
            await self.engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


PROBE_BUSY_TIMEOUT = timedelta(seconds=1)
"""How long ``/readyz``'s write on a SQLite file waits for the write lock (its answer is
awaited 2 s)."""
SQLITE_MIN_FREE_BYTES = SQLITE_WAL_LIMIT_BYTES
"""A SQLite file whose disk has less room than one write-ahead log's bound cannot be counted
on to record the next answers: ``/readyz`` says not ready."""


def sqlite_write_problem(connection: Connection, path: Path) -> str | None:
    """Why the SQLite file at ``path`` cannot be written now, or None: its disk's free space
    (``SQLITE_MIN_FREE_BYTES``), then one write — its header's ``user_version`` written back as
    it is (no table of ours touched; a read-only file or a full disk refuses it)."""
    disk = os.statvfs(path.parent)
    free = disk.f_bavail * disk.f_frsize
    if free < SQLITE_MIN_FREE_BYTES:
        return (
            f"the disk holding {path.name} is full ({free // 1024} KiB free, "
            f"{SQLITE_MIN_FREE_BYTES // 1024} KiB needed): answers cannot be recorded"
        )
    version = int(connection.exec_driver_sql("PRAGMA user_version").scalar() or 0)
    connection.exec_driver_sql(f"PRAGMA user_version={version}")
    return None


def sqlite_pragmas(busy_timeout: timedelta) -> Any:
    """The connect hook of a SQLite connection: WAL (bounded: ``SQLITE_WAL_PRAGMAS``),
    ``busy_timeout``, synchronous NORMAL."""
    milliseconds = int(busy_timeout.total_seconds() * 1000)

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={milliseconds}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        for pragma in SQLITE_WAL_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    return on_connect


_SQLITE_BUSY_TIMEOUT = timedelta(milliseconds=SQLITE_BUSY_TIMEOUT_MS)


def create_engine(url: DatabaseUrl) -> AsyncEngine:
    """An async engine; SQLite gets WAL and a busy timeout; in-memory SQLite one connection."""
    if url.is_sqlite:
        if url.sqlite_path is None:
            engine = create_async_engine(
                url.url, poolclass=StaticPool, connect_args={"check_same_thread": False}
            )
        else:
            engine = create_async_engine(
                url.url, connect_args={"timeout": _SQLITE_BUSY_TIMEOUT.total_seconds()}
            )
        event.listen(engine.sync_engine, "connect", sqlite_pragmas(_SQLITE_BUSY_TIMEOUT))
        return engine
    engine = create_async_engine(url.url, pool_size=10, max_overflow=20)
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


def _open_transactions(url: DatabaseUrl, engine: AsyncEngine) -> Transactions:
    """How statements run on ``engine``'s database (see ``bot.store.transactions``)."""
    if not url.is_sqlite:
        return AsyncEngineTransactions(engine, idle_ping_after=IDLE_PING_SECONDS)
    if url.sqlite_path is None:
        return AsyncEngineTransactions(engine, one_connection=True)
    return ThreadedSqliteTransactions.open(
        url.url,
        busy_timeout_s=_SQLITE_BUSY_TIMEOUT.total_seconds(),
        on_connect=sqlite_pragmas(_SQLITE_BUSY_TIMEOUT),
    )
