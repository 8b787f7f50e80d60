"""Which failures are the database's going away (tried again later) and which are real."""

from __future__ import annotations

import asyncpg
import psycopg
import pytest
from psycopg_pool import PoolTimeout
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

from bot.store.interruptions import is_interruption


def _invalidated() -> OperationalError:
    error = OperationalError("SELECT 1", {}, Exception("gone"))
    error.connection_invalidated = True
    return error


@pytest.mark.parametrize(
    "error",
    [
        _invalidated(),
        OperationalError("SELECT 1", {}, ConnectionRefusedError("refused")),
        OperationalError("SELECT 1", {}, asyncpg.exceptions.AdminShutdownError("shutdown")),
        OperationalError("SELECT 1", {}, asyncpg.exceptions.SerializationError("40001")),
        asyncpg.exceptions.ConnectionDoesNotExistError("closed"),
        asyncpg.exceptions.CannotConnectNowError("starting up"),
        psycopg.OperationalError("server closed the connection unexpectedly"),
        PoolTimeout("couldn't get a connection after 30 s"),
        ConnectionResetError("reset by peer"),
    ],
    ids=repr,
)
def test_the_database_going_away_is_an_interruption(error: BaseException) -> None:
    assert is_interruption(error)


def test_an_interruption_that_caused_another_error_is_one() -> None:
    error = RuntimeError("the store failed")
    error.__cause__ = asyncpg.exceptions.ConnectionDoesNotExistError("closed")
    assert is_interruption(error)


@pytest.mark.parametrize(
    "error",
    [
        IntegrityError("INSERT", {}, Exception("duplicate key")),
        ProgrammingError("SELEC", {}, Exception("syntax error")),
        asyncpg.exceptions.UniqueViolationError("duplicate"),
        ValueError("a bad value"),
        KeyError("missing"),
    ],
    ids=repr,
)
def test_a_real_failure_is_not_an_interruption(error: BaseException) -> None:
    assert not is_interruption(error)
