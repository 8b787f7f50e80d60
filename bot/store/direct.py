"""The hot statements, run on the driver's cursor directly: writes (their row count) and
statements that return rows (``rows``, ``first``, ``one_or_none``). A statement built once
(``bot.store.statements``) still costs SQLAlchemy an execution context per run: the compiled
cache's look-up, the parameters processed, events dispatched, a result object made and closed —
several times what SQLite spends on it. ``execute`` compiles each statement once per dialect
and set of parameter names, keeps its SQL text, parameter order, the values bound in the
statement itself and the bind processors (the conversions SQLAlchemy applies: a datetime to
SQLite's text, a boolean to 0/1), and hands the converted values to the connection's DBAPI
cursor: sqlite3's on a SQLite file (the store's worker threads); on PostgreSQL to asyncpg
itself, the way SQLAlchemy's asyncpg adapter runs a cursor's statement (its lock, its
transaction, its prepared statements, its errors) but without a cursor, whose description of
every column per run cost a pause's read 60,000 instructions (inside the greenlet bridge). It
runs on the same connection, so in the caller's transaction (sqlite3 and the adapter begin it
before the first statement, as under SQLAlchemy; none in autocommit). A write gives its row
count back; a statement that returns rows gives them read as SQLAlchemy reads them — each value
through the result processor SQLAlchemy would choose for its column (``UtcDateTime``'s aware
datetime, a boolean from 0/1), found once per statement from its compiled result columns and
the cursor's first description — as rows whose ``_mapping`` is a dict by column name. A driver
error is raised wrapped as SQLAlchemy wraps it (``IntegrityError``...), and a lost connection
is invalidated as SQLAlchemy invalidates it, so the pool never hands it out again.

It goes the ordinary way (``Connection.execute``) whenever SQLAlchemy would do more than that:
another driver (aiosqlite, for an in-memory database), a statement whose compiled form fills in
Python-side defaults, fetches values after or expands parameters, and any engine whose
statements or transactions are watched: listeners of their events, or echo on (the statement
counts of ``tests.benchmarks.cycle_cost`` and the tests that count statements see every one).
"""

from __future__ import annotations

import contextlib
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, NoReturn, Protocol, TypeVar, cast

from sqlalchemy import Connection
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.exc import DBAPIError, MultipleResultsFound
from sqlalchemy.sql.base import Executable

Parameters = Mapping[str, Any] | Sequence[Mapping[str, Any]]
R = TypeVar("R")


class Mapped(Protocol):
    """A row read by name: SQLAlchemy's ``Row`` or this module's."""

    @property
    def _mapping(self) -> Mapping[Any, Any]: ...


class DirectRow:
    """A row read on the cursor directly: ``_mapping``, a dict by column name, as ``Row``'s."""

    __slots__ = ("_mapping",)

    def __init__(self, mapping: dict[str, Any]) -> None:
        self._mapping = mapping

    def __repr__(self) -> str:
        return f"DirectRow({self._mapping!r})"


@dataclass(slots=True)
class _Prepared:
    """One statement compiled for a dialect and one set of parameter names: the name of the
    value at each position (the caller's parameter, or a value bound in the statement itself,
    kept converted in ``bound``) and the conversions of the caller's values.

    A statement that returns rows also keeps its result columns (name, type, whether named by
    the cursor: a textual statement's are) and, from its first run, how each row is read.

    Values and rows are gathered in C (``itemgetter``, ``dict(zip(...))``); only the values
    with a conversion pass through Python. A row of ``cs_pauses`` has 45 columns, 8 of them
    converted: taking each column in a comprehension cost more than SQLite's reading it."""

    sql: str
    names: tuple[str, ...]
    bound: dict[str, Any]
    converts: tuple[tuple[int, Callable[[Any], Any]], ...]
    returns: tuple[tuple[str, Any], ...] | None = None
    textual: bool = False
    reader: tuple[tuple[str, ...], tuple[tuple[str, Callable[[Any], Any]], ...]] | None = None
    take: Callable[[Mapping[str, Any]], tuple[Any, ...]] = field(init=False)

    def __post_init__(self) -> None:
        self.take = _taker(self.names)

    def values(self, parameters: Mapping[str, Any]) -> tuple[Any, ...]:
        if self.bound:
            parameters = {**self.bound, **parameters}  # the caller's value wins a name
        taken = self.take(parameters)
        if not self.converts:
            return taken
        values = list(taken)
        for position, convert in self.converts:
            values[position] = convert(values[position])
        return tuple(values)

    def read(
        self, dialect: Dialect, description: Sequence[Any], raw: Sequence[Any]
    ) -> list[Mapped]:
        """The rows as SQLAlchemy reads them: its result processor for each column, chosen as
        it chooses it (the column's type, the dialect, the cursor's type code), once."""
        if not raw:
            return []  # no description needed (a driver may give none then)
        reader = self.reader
        if reader is None:
            reader = self.reader = self._reader(dialect, description)
        keys, processes = reader
        rows: list[Mapped] = []
        for row in raw:
            mapping = dict(zip(keys, row, strict=True))
            for key, process in processes:
                mapping[key] = process(mapping[key])
            rows.append(DirectRow(mapping))
        return rows

    def _reader(
        self, dialect: Dialect, description: Sequence[Any]
    ) -> tuple[tuple[str, ...], tuple[tuple[str, Callable[[Any], Any]], ...]]:
        """Each column's key, and the keys whose values are converted, with the conversion."""
        returns = self.returns or ()
        if len(description) != len(returns):  # never for a statement compiled here
            raise RuntimeError(f"{len(description)} columns returned: {self.sql}")
        keys = tuple(
            d[0] if self.textual else name
            for d, (name, _) in zip(description, returns, strict=True)
        )
        # a key named twice holds its last column's value: its last column's conversion
        processes = {
            key: type_._cached_result_processor(dialect, d[1])
            for key, d, (_, type_) in zip(keys, description, returns, strict=True)
        }
        return keys, tuple((key, p) for key, p in processes.items() if p is not None)


def _taker(names: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values of ``names`` from a mapping, as a tuple, in C (``itemgetter`` gives one
    name's value itself, not in a tuple)."""
    if not names:
        return lambda _: ()
    take = operator.itemgetter(*names)
    if len(names) == 1:
        return lambda parameters: (take(parameters),)
    return cast(Callable[[Mapping[str, Any]], tuple[Any, ...]], take)


_NOT_DIRECT: Any = object()
"""A statement SQLAlchemy must run itself (Python-side defaults, expanding parameters)."""
_DRIVERS = ("pysqlite", "asyncpg")
"""Where statements go to the cursor directly (aiosqlite's adapter serves only an in-memory
database, off the hot path)."""
_DONE_BY_SQLALCHEMY = (
    "postfetch",
    "insert_prefetch",
    "update_prefetch",
    "literal_execute_params",
    "post_compile_params",
)
"""What a compiled statement may need SQLAlchemy's execution context for: values fetched after
(the columns a SET computes in SQL: for ``inserted_primary_key`` and the like, nothing a
statement that returns its rows needs, so ``rows`` skips the first), Python-side defaults,
parameters expanded into the text."""
_prepared: dict[tuple[Executable, str, frozenset[str], bool], Any] = {}
"""Compiled forms by (statement, dialect, parameter names, whether rows are read). The statement
itself is the key (an id could be reused once a statement is gone); the hot statements are
module constants, each run with one or two sets of names: a few dozen entries."""
MAX_PREPARED = 256
"""Past this many, a statement not prepared yet goes SQLAlchemy's way: a caller building its
statement per call cannot grow the cache without bound."""


def execute(connection: Connection, statement: Executable, parameters: Parameters) -> int:
    """Run ``statement`` (a write that returns no rows) with ``parameters`` (one mapping, or
    several: executemany) on ``connection``, in its transaction; the row count."""
    if isinstance(parameters, Mapping):
        first, many = parameters, None
    elif parameters:
        first, many = parameters[0], parameters
    else:
        return 0
    prepared = (
        _NOT_DIRECT if ordinary(connection) else _prepare(statement, connection, first, False)
    )
    if prepared is _NOT_DIRECT:
        return int(connection.execute(statement, parameters).rowcount)
    if many is None and _on_asyncpg_itself(connection):
        _, _, status = _on_asyncpg(connection, prepared, first)
        found = _ROW_COUNT.match(status or "")
        return int(found.group(1)) if found else -1
    cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        if many is None:
            cursor.execute(prepared.sql, prepared.values(first))
        else:
            cursor.executemany(prepared.sql, [prepared.values(p) for p in many])
        return int(cursor.rowcount)
    except connection.dialect.loaded_dbapi.Error as error:
        _raise_as_sqlalchemy(connection, cursor, prepared.sql, error)
    finally:
        _close(cursor)


def rows(
    connection: Connection, statement: Executable, parameters: Mapping[str, Any]
) -> Sequence[Mapped]:
    """Run ``statement`` (a SELECT, or a write ``RETURNING`` rows) with ``parameters`` on
    ``connection``, in its transaction; every row it returns, each read by column name."""
    prepared = (
        _NOT_DIRECT if ordinary(connection) else _prepare(statement, connection, parameters, True)
    )
    if prepared is _NOT_DIRECT:
        return connection.execute(statement, parameters).all()
    if _on_asyncpg_itself(connection):
        raw, attributes, _ = _on_asyncpg(connection, prepared, parameters)
        described = cast(Sequence[Any], _Described(attributes))
        return cast(_Prepared, prepared).read(connection.dialect, described, raw)
    cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(prepared.sql, prepared.values(parameters))
        raw = cursor.fetchall()  # every row: a RETURNING statement's work ends with its last
        description = cursor.description
    except connection.dialect.loaded_dbapi.Error as error:
        _raise_as_sqlalchemy(connection, cursor, prepared.sql, error)
    finally:
        _close(cursor)
    return cast(_Prepared, prepared).read(connection.dialect, description, raw)


def first(
    connection: Connection, statement: Executable, parameters: Mapping[str, Any]
) -> Mapped | None:
    """The first row ``statement`` returns, or None (``Result.first``)."""
    found = rows(connection, statement, parameters)
    return found[0] if found else None


def one_or_none(
    connection: Connection, statement: Executable, parameters: Mapping[str, Any]
) -> Mapped | None:
    """The one row ``statement`` returns, None if none; ``MultipleResultsFound`` if more
    (``Result.one_or_none``)."""
    found = rows(connection, statement, parameters)
    if len(found) > 1:
        raise MultipleResultsFound("Multiple rows were found when one or none was required")
    return found[0] if found else None


_ROW_COUNT = re.compile(r"(?:SELECT|UPDATE|DELETE|INSERT \d+) (\d+)")
"""A command's row count in its status (as SQLAlchemy's asyncpg adapter reads it)."""


class _Described:
    """asyncpg's result attributes as a DBAPI description (name, type code), made only if
    read (a statement's reader is found from its first run's)."""

    __slots__ = ("_attributes",)

    def __init__(self, attributes: Any) -> None:
        self._attributes = attributes or ()

    def __len__(self) -> int:
        return len(self._attributes)

    def __iter__(self) -> Any:
        return iter([(a.name, a.type.oid) for a in self._attributes])


_ADAPTER_PARTS = (
    "_execute_mutex",
    "_started",
    "_start_transaction",
    "_prepare",
    "_handle_exception",
    "await_",
)
"""What ``_asyncpg_run`` uses of SQLAlchemy's asyncpg adapter (private: present from 2.0.30,
the lowest release ``pyproject.toml`` admits, to 2.0.58 at least)."""
_adapter_fits: dict[type, bool] = {}


def _on_asyncpg_itself(connection: Connection) -> bool:
    """Whether a statement goes to asyncpg itself: the driver is asyncpg and its SQLAlchemy
    adapter has every part this module uses (looked at once per adapter class; a release
    without one runs statements on the adapter's cursor instead, as before)."""
    if connection.dialect.driver != "asyncpg":
        return False
    adapter = connection.connection.dbapi_connection
    fits = _adapter_fits.get(type(adapter))
    if fits is None:
        fits = _adapter_fits[type(adapter)] = all(hasattr(adapter, p) for p in _ADAPTER_PARTS)
    return fits


def _on_asyncpg(
    connection: Connection, prepared: Any, parameters: Mapping[str, Any]
) -> tuple[Any, Any, str | None]:
    """``prepared`` run on asyncpg itself, as SQLAlchemy's adapter runs a cursor's statement
    (its lock, its transaction begun if one is due, its cache of prepared statements, its
    errors), without the cursor: no description built, no rows copied, no cursor to close."""
    adapter: Any = connection.connection.dbapi_connection
    try:
        ran: tuple[Any, Any, str | None] = adapter.await_(
            _asyncpg_run(adapter, prepared.sql, prepared.values(parameters), connection.dialect)
        )
    except connection.dialect.loaded_dbapi.Error as error:
        _raise_as_sqlalchemy(connection, None, prepared.sql, error)
    return ran


async def _asyncpg_run(
    adapter: Any, sql: str, values: tuple[Any, ...], dialect: Any, *, begin: bool = True
) -> Any:
    """``begin=False``: outside any transaction (asyncpg's autocommit), none begun."""
    async with adapter._execute_mutex:
        if begin and not adapter._started:
            await adapter._start_transaction()
        try:
            statement, attributes = await adapter._prepare(
                sql, dialect._invalidate_schema_cache_asof
            )
            rows = await statement.fetch(*values)
        except Exception as error:
            adapter._handle_exception(error)  # raised as the adapter's DBAPI error
        return rows, attributes, statement.get_statusmsg()


@dataclass(frozen=True, slots=True)
class OneStatement(Generic[R]):
    """A store call's body that is one statement and what is made of its rows (``then``, pure
    Python). Run as any body (``__call__``); on PostgreSQL in autocommit it may also be run
    without the greenlet bridge, from the loop itself (``transactions.AsyncEngineTransactions``:
    ``rows_at_once``)."""

    statement: Executable
    parameters: Mapping[str, Any]
    then: Callable[[Sequence[Mapped]], R]

    def __call__(self, connection: Connection) -> R:
        return self.then(rows(connection, self.statement, self.parameters))


async def rows_at_once(connection: Connection, body: OneStatement[Any]) -> Sequence[Mapped] | None:
    """``body``'s statement run on asyncpg itself from the loop, as ``rows`` runs it through
    the greenlet bridge, in autocommit (``connection`` holds no transaction); None, and nothing
    run, where ``rows`` would go another way (watched, another driver, not compiled directly)
    or a transaction is open. A driver's error is raised as the adapter translates it (a
    ``DBAPIError`` of its ``dbapi``): the caller raises it as SQLAlchemy would
    (``raise_as_sqlalchemy``, which may close the connection: on the bridge)."""
    if ordinary(connection) or not _on_asyncpg_itself(connection):
        return None
    prepared = _prepare(body.statement, connection, body.parameters, True)
    adapter: Any = connection.connection.dbapi_connection
    if prepared is _NOT_DIRECT or adapter._started:
        return None
    dialect = connection.dialect
    raw, attributes, _ = await _asyncpg_run(
        adapter, prepared.sql, prepared.values(body.parameters), dialect, begin=False
    )
    return cast(_Prepared, prepared).read(dialect, cast(Sequence[Any], _Described(attributes)), raw)


def raise_as_sqlalchemy(connection: Connection, body: OneStatement[Any], error: Any) -> NoReturn:
    """``error`` (the adapter's, from ``rows_at_once``) raised as SQLAlchemy raises it, a lost
    connection invalidated (on the greenlet bridge: closing it is I/O)."""
    prepared = _prepare(body.statement, connection, body.parameters, True)
    _raise_as_sqlalchemy(connection, None, cast(_Prepared, prepared).sql, error)


def commit(connection: Connection) -> None:
    """End the transaction the statements on ``connection`` opened: SQLAlchemy's when it
    began one (it ran a statement), else the driver's own (only this module's statements ran,
    or none). A driver's error is raised as SQLAlchemy raises it."""
    if connection.in_transaction():
        connection.commit()
        return
    dbapi_connection = connection.connection.dbapi_connection
    try:
        dbapi_connection.commit()  # type: ignore[union-attr]
    except connection.dialect.loaded_dbapi.Error as error:
        _raise_as_sqlalchemy(connection, None, "COMMIT", error)


def roll_back(connection: Connection) -> None:
    """Undo what the statements on ``connection`` did in the transaction they opened."""
    if connection.in_transaction():
        connection.rollback()
    with contextlib.suppress(Exception):  # a lost connection: nothing to undo
        connection.connection.dbapi_connection.rollback()  # type: ignore[union-attr]


def _close(cursor: Any) -> None:
    """Close ``cursor``; a lost connection's cursor may refuse (nothing to close then).
    Not ``contextlib.suppress``: a context manager object per statement."""
    try:  # noqa: SIM105
        cursor.close()
    except Exception:
        pass


def _raise_as_sqlalchemy(connection: Connection, cursor: Any, sql: str, error: Any) -> NoReturn:
    """``error`` raised as SQLAlchemy raises a driver's error; a lost connection invalidated
    as it invalidates one (this connection and the pool's older ones are dropped)."""
    dialect = connection.dialect
    lost = dialect.is_disconnect(error, connection.connection.dbapi_connection, cursor)
    if lost:
        connection.engine.pool._invalidate(connection.connection, error)
        connection.invalidate(error)
    raise DBAPIError.instance(
        sql,
        None,
        error,
        dialect.loaded_dbapi.Error,
        connection_invalidated=lost,
        dialect=dialect,
    ) from error


def ordinary(connection: Connection) -> bool:
    """Whether SQLAlchemy runs statements here (so do its transactions, for whoever watches
    them): not pysqlite or asyncpg, or its execution is watched (echo; listeners of statements
    or transactions on the engine, or on ``Engine``, which every engine inherits). Other
    events do not count: an engine made with ``execution_options(isolation_level=...)`` has
    one of its own for each new connection (walking them costs each statement: PostgreSQL's
    autocommit calls switch the driver instead, ``transactions._in_autocommit``)."""
    if connection.dialect.driver not in _DRIVERS or connection._echo:
        return True
    if not (connection._has_events or connection.engine._has_events):
        return False
    dispatch = connection.dispatch
    return any(getattr(dispatch, name) for name in _WATCHING)


_WATCHING = (
    "before_execute",
    "after_execute",
    "before_cursor_execute",
    "after_cursor_execute",
    "begin",
    "commit",
    "rollback",
)
"""The events of a statement run and of a transaction: with a listener on any, SQLAlchemy runs
them (so they are seen)."""


def _prepare(
    statement: Executable, connection: Connection, parameters: Mapping[str, Any], returns: bool
) -> Any:
    key = (statement, connection.dialect.name, frozenset(parameters), returns)
    prepared = _prepared.get(key)
    if prepared is None:
        if len(_prepared) >= MAX_PREPARED:
            return _NOT_DIRECT
        prepared = _prepared[key] = _compile(
            statement, connection.dialect, list(parameters), returns
        )
    return prepared


def _compile(statement: Executable, dialect: Dialect, names: list[str], returns: bool) -> Any:
    # a write gives back its row count only: compiled as for executemany, so without the
    # RETURNING of the new row's key SQLAlchemy adds on PostgreSQL (``inserted_primary_key``)
    compiled: Any = cast(Any, statement).compile(
        dialect=dialect, column_keys=names, for_executemany=not returns
    )
    order = compiled.positiontup
    needs = _DONE_BY_SQLALCHEMY[1:] if returns else _DONE_BY_SQLALCHEMY
    if order is None or any(getattr(compiled, name, None) for name in needs):
        return _NOT_DIRECT
    columns = compiled._result_columns
    if not returns and (columns or compiled.effective_returning):
        return _NOT_DIRECT  # rows to read: ``rows``' work
    if returns and (
        not columns
        or not compiled._ordered_columns
        or compiled._ad_hoc_textual
        or compiled._loose_column_name_matching
    ):
        return _NOT_DIRECT  # matched to the cursor's columns by name: SQLAlchemy's work
    processors = compiled._bind_processors
    bound: dict[str, Any] = {}
    converts: list[tuple[int, Callable[[Any], Any]]] = []
    for position, name in enumerate(order):
        convert = processors.get(name)
        if name in names:
            if convert is not None:
                converts.append((position, convert))
            continue
        bind = compiled.binds[name]
        if bind.required or bind.callable is not None:
            return _NOT_DIRECT  # a parameter the caller did not give: SQLAlchemy's error
        value = bind.effective_value
        bound[name] = value if convert is None else convert(value)
    return _Prepared(
        sql=compiled.string,
        names=tuple(order),
        bound=bound,
        converts=tuple(converts),
        returns=tuple((c[0], c[3]) for c in columns) if returns else None,
        textual=bool(compiled._textual_ordered_columns),
    )
