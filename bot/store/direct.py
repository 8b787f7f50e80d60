"""The hot writes that return no rows, run on the driver's cursor directly.

A statement built once (``bot.store.statements``) still costs SQLAlchemy an execution context
per run: the compiled cache's look-up, the parameters processed, events dispatched, a result
object made and closed — several times what SQLite spends on it. ``execute`` compiles each
statement once per dialect and set of parameter names, keeps its SQL text, parameter order, the
values bound in the statement itself and the bind processors (the conversions SQLAlchemy
applies: a datetime to SQLite's text, a boolean to 0/1), and hands the converted values to the
connection's DBAPI cursor: sqlite3's on a SQLite file (the store's worker threads), SQLAlchemy's
asyncpg adapter on PostgreSQL (inside ``run_sync``, no thread). It runs on the same connection,
so in the caller's transaction (sqlite3 and the adapter begin it before the first statement, as
under SQLAlchemy; none in autocommit); only the row count comes back. A driver error is raised
wrapped as SQLAlchemy wraps it (``IntegrityError``...), and a lost connection is invalidated as
SQLAlchemy invalidates it, so the pool never hands it out again.

It goes the ordinary way (``Connection.execute``) whenever SQLAlchemy would do more than that:
another driver (aiosqlite, for an in-memory database), a statement whose compiled form fills in
Python-side defaults, fetches values after or expands parameters, and any engine with event
listeners or echo on (the statement counts of ``tests.benchmarks.cycle_cost`` and the tests that
count statements see every statement).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Connection
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.base import Executable

Parameters = Mapping[str, Any] | Sequence[Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class _Prepared:
    """One statement compiled for SQLite and one set of parameter names: for each position,
    the parameter's name and its conversion, or (name None) the value bound in the statement."""

    sql: str
    positions: tuple[tuple[str | None, Any, Callable[[Any], Any] | None], ...]

    def values(self, parameters: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(
            bound
            if name is None
            else parameters[name]
            if convert is None
            else convert(parameters[name])
            for name, bound, convert in self.positions
        )


_NOT_DIRECT: Any = object()
"""A statement SQLAlchemy must run itself (Python-side defaults, expanding parameters)."""
_DRIVERS = ("pysqlite", "asyncpg")
"""Where statements go to the cursor directly (aiosqlite's adapter serves only an in-memory
database, off the hot path)."""
_DONE_BY_SQLALCHEMY = (
    "insert_prefetch",
    "update_prefetch",
    "postfetch",
    "literal_execute_params",
    "post_compile_params",
    "effective_returning",
)
"""What a compiled statement may need SQLAlchemy's execution context for: Python-side defaults,
values fetched after, parameters expanded into the text, rows returned."""
_prepared: dict[tuple[Executable, str, frozenset[str]], Any] = {}
"""Compiled forms by (statement, dialect, parameter names). The statement itself is the key (an
id could be reused once a statement is gone); the hot statements are module constants, each run
with one or two sets of names: a few dozen entries."""
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
    prepared = _NOT_DIRECT if _ordinary(connection) else _prepare(statement, connection, first)
    if prepared is _NOT_DIRECT:
        return int(connection.execute(statement, parameters).rowcount)
    dialect = connection.dialect
    cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        if many is None:
            cursor.execute(prepared.sql, prepared.values(first))
        else:
            cursor.executemany(prepared.sql, [prepared.values(p) for p in many])
        return int(cursor.rowcount)
    except dialect.loaded_dbapi.Error as error:
        lost = dialect.is_disconnect(error, connection.connection.dbapi_connection, cursor)
        if lost:  # as SQLAlchemy does: this connection and the pool's older ones are dropped
            connection.engine.pool._invalidate(connection.connection, error)
            connection.invalidate(error)
        raise DBAPIError.instance(
            prepared.sql,
            None,
            error,
            dialect.loaded_dbapi.Error,
            connection_invalidated=lost,
            dialect=dialect,
        ) from error
    finally:
        with contextlib.suppress(Exception):  # a cursor of a lost connection
            cursor.close()


def _ordinary(connection: Connection) -> bool:
    """Whether SQLAlchemy runs statements here: not pysqlite, or its execution is watched
    (event listeners on the engine or on ``Engine``, which every engine inherits; echo)."""
    return bool(
        connection.dialect.driver not in _DRIVERS
        or connection._has_events
        or connection.engine._has_events
        or connection._echo
    )


def _prepare(statement: Executable, connection: Connection, parameters: Mapping[str, Any]) -> Any:
    key = (statement, connection.dialect.name, frozenset(parameters))
    prepared = _prepared.get(key)
    if prepared is None:
        if len(_prepared) >= MAX_PREPARED:
            return _NOT_DIRECT
        prepared = _prepared[key] = _compile(statement, connection.dialect, list(parameters))
    return prepared


def _compile(statement: Executable, dialect: Dialect, names: list[str]) -> Any:
    compiled: Any = cast(Any, statement).compile(dialect=dialect, column_keys=names)
    order = compiled.positiontup
    if order is None or any(getattr(compiled, name, None) for name in _DONE_BY_SQLALCHEMY):
        return _NOT_DIRECT
    processors = compiled._bind_processors
    positions: list[tuple[str | None, Any, Callable[[Any], Any] | None]] = []
    for name in order:
        convert = processors.get(name)
        if name in names:
            positions.append((name, None, convert))
            continue
        bind = compiled.binds[name]
        if bind.required or bind.callable is not None:
            return _NOT_DIRECT  # a parameter the caller did not give: SQLAlchemy's error
        value = bind.effective_value
        positions.append((None, value if convert is None else convert(value), None))
    return _Prepared(sql=compiled.string, positions=tuple(positions))
