"""A store call that is one statement (``direct.OneStatement``) runs on PostgreSQL's kept
connection from the loop itself, without the greenlet bridge (about a quarter of such a call's
client CPU, issue 32): the same rows, the same errors as SQLAlchemy raises them, a lost
connection given up and the next call on a new one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Integer, String, column, text
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.util import greenlet_spawn as spawn

from bot.store import direct, transactions
from bot.store.database import Database
from tests.databases import postgres_database
from tests.store.test_idle_ping import _kill_backend

pytestmark = pytest.mark.postgres

# textual statements with their columns, as the store's own (``bot.store.one_statement``)
_PID = text("SELECT pg_backend_pid() AS pid").columns(column("pid", Integer))
_INSERT = text("INSERT INTO t (k) VALUES (:k) RETURNING k").columns(column("k", String))


def _pid(rows: Sequence[direct.Mapped]) -> int:
    return int(rows[0]._mapping["pid"])


@pytest.fixture
async def database() -> AsyncIterator[Database]:
    async with postgres_database() as url:
        opened = Database.open(url)
        try:
            await opened.migrate(datetime.now(UTC))
            await opened.transactions.apply(
                lambda c: c.execute(text("CREATE TABLE t (k TEXT PRIMARY KEY)"))
            )
            yield opened
        finally:
            await opened.close()


@pytest.fixture
def bridged(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The calls that went over the greenlet bridge."""
    calls: list[Any] = []

    async def counted(function: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(function)
        return await spawn(function, *args, **kwargs)

    monkeypatch.setattr(transactions, "greenlet_spawn", counted)
    return calls


async def test_a_one_statement_call_runs_on_the_kept_connection_from_the_loop(
    database: Database, bridged: list[Any]
) -> None:
    tx = database.transactions
    first = await tx.read(direct.OneStatement(_PID, {}, _pid))  # kept once it ended
    bridged.clear()
    inserted = await tx.apply(direct.OneStatement(_INSERT, {"k": "a"}, list), short=True)
    assert [row._mapping["k"] for row in inserted] == ["a"]
    assert await tx.read(direct.OneStatement(_PID, {}, _pid)) == first  # the same connection
    assert bridged == []
    # the usual way sees what it wrote (autocommit: committed)
    found = await tx.read(lambda c: c.execute(text("SELECT k FROM t")).scalars().all())
    assert found == ["a"]


async def test_a_statement_that_fails_raises_as_sqlalchemy_does_and_the_next_call_works(
    database: Database,
) -> None:
    tx = database.transactions
    await tx.apply(direct.OneStatement(_INSERT, {"k": "a"}, list), short=True)
    with pytest.raises(IntegrityError):
        await tx.apply(direct.OneStatement(_INSERT, {"k": "a"}, list), short=True)
    again = await tx.apply(direct.OneStatement(_INSERT, {"k": "b"}, list), short=True)
    assert [row._mapping["k"] for row in again] == ["b"]


async def test_a_lost_connection_is_given_up_and_the_next_call_gets_another(
    database: Database,
) -> None:
    tx = database.transactions
    pid = await tx.read(direct.OneStatement(_PID, {}, _pid))
    url = database.engine.url.render_as_string(hide_password=False)
    await _kill_backend(url, pid)
    with pytest.raises(DBAPIError) as raised:
        await tx.read(direct.OneStatement(_PID, {}, _pid))
    assert raised.value.connection_invalidated
    assert await tx.read(direct.OneStatement(_PID, {}, _pid)) != pid
