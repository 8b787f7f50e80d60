"""Which failures are the database's (or the network's) and not a run's own.

A lost connection, a pool that handed out a connection the server had closed, a server shutting
down, a serialization failure or a deadlock: trying again later succeeds, so a pass that meets
one is given back to the recovery sweep (``bot.runtime.engine``), never ended FAILED. Anything
else (a bad statement, a constraint, a value that cannot be read) is a real failure.
"""

from __future__ import annotations

import sqlite3
from typing import Final

import asyncpg
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

RETRYABLE_SQLSTATES: Final = frozenset(
    {
        "40001",  # serialization_failure
        "40P01",  # deadlock_detected
        "57P01",  # admin_shutdown (a fast stop)
        "57P02",  # crash_shutdown
        "57P03",  # cannot_connect_now (starting up)
        "08000",  # connection_exception, and its subclasses below
        "08003",
        "08006",
        "08001",
        "08004",
    }
)
"""SQLSTATEs that say "try again": the transaction or the connection failed, not the query."""

_ASYNCPG: Final = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.TransactionRollbackError,  # serialization failure, deadlock
    asyncpg.exceptions.OperatorInterventionError,  # admin/crash shutdown, cannot connect now
)


def is_interruption(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) says the database or the network went away for a
    while, so the same work succeeds if tried again."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _interrupts(current):
            return True
        current = current.__cause__
    return False


def _interrupts(error: BaseException) -> bool:
    if isinstance(error, DBAPIError):
        if error.connection_invalidated:
            return True
        return error.orig is not None and _interrupts(error.orig)
    if isinstance(error, (DisconnectionError, PoolTimeoutError, ConnectionError, TimeoutError)):
        return True
    if isinstance(error, _ASYNCPG):
        return True
    if isinstance(error, sqlite3.OperationalError):
        return "locked" in str(error) or "busy" in str(error)
    return _is_psycopg_interruption(error)


def _is_psycopg_interruption(error: BaseException) -> bool:
    """psycopg's (the checkpointer's driver): a closed or broken connection, a pool that could
    not hand one out in time, or a retryable SQLSTATE."""
    module = type(error).__module__
    if not module.startswith(("psycopg", "psycopg_pool")):
        return False
    import psycopg  # the checkpointer's driver, installed with PostgreSQL support

    if isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError)):
        return True
    sqlstate = getattr(error, "sqlstate", None)
    return isinstance(sqlstate, str) and sqlstate in RETRYABLE_SQLSTATES
