"""The pause cycle's writes find their rows by an index however small the table was when
PostgreSQL planned them: asyncpg prepares each statement once, and the server keeps
the plan it chose after a few runs (a generic plan) until the table is next analyzed. A plan
made on a new database — a few rows, never analyzed — that scanned ``cs_pauses`` whole made
every rest and end slower as the table grew (issue 32: 0.24 -> 0.61 ms a rest after 2,000
cycles). Checked on the generic plan of each statement on a new, never analyzed database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from sqlalchemy.dialects.postgresql import asyncpg as asyncpg_dialect

from bot.store import one_statement
from bot.store.database import Database
from bot.store.statements import MARK_SENT
from bot.store.tables import PENDING_BY_ROLE_INDEX
from tests.databases import postgres_database

pytestmark = pytest.mark.postgres


@pytest.fixture
async def connection() -> AsyncIterator[asyncpg.Connection]:
    async with postgres_database() as url:
        opened = Database.open(url)
        try:
            await opened.migrate(datetime.now(UTC))  # the tables made, never analyzed
        finally:
            await opened.close()
        connection = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            yield connection
        finally:
            await connection.close()


_DIALECT: Any = asyncpg_dialect.dialect  # the driver the store runs its statements on


async def generic_plan(connection: asyncpg.Connection, statement: Any) -> str:
    """The plan PostgreSQL keeps for ``statement`` once it plans it without its values."""
    compiled = statement.compile(dialect=_DIALECT())
    await connection.execute(f"PREPARE planned AS {compiled}")
    await connection.execute("SET plan_cache_mode = force_generic_plan")
    nulls = ", ".join("NULL" for _ in compiled.positiontup or ())
    rows = await connection.fetch(f"EXPLAIN EXECUTE planned({nulls})")
    return "\n".join(row[0] for row in rows)


STATEMENTS: dict[str, Any] = {
    "rest": one_statement.rest(release=True, results=True),
    "end": one_statement.end_tree_if_nothing_waits(("status",), release=True, results=True),
    "answer": one_statement.close_opening(
        ("status",), ("pause_id",), before_deadline=True, exact=True
    ),
    "take": one_statement.TAKE_NOTING_RAN_WITH,
    "start": one_statement.start_tree(("execution_id",)),
    "sent": MARK_SENT,
}


@pytest.mark.parametrize("name", STATEMENTS)
async def test_a_pause_cycles_write_reads_no_table_whole(
    connection: asyncpg.Connection, name: str
) -> None:
    plan = await generic_plan(connection, STATEMENTS[name])
    assert "Seq Scan on cs_pauses" not in plan, plan
    # nor every waiting pause: the pending gauge's partial index holds them all, and a plan
    # that found a pause (or a tree's waiting ones) by it, kept from a new database, made an
    # answer 30 ms and an end 40 ms with 30,000 waiting, against 0.2 and 0.07 once analyzed
    assert str(PENDING_BY_ROLE_INDEX.name) not in plan, plan
