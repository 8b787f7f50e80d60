"""The sweeps read their partial indexes (v22), on SQLite and PostgreSQL.

Since v22 the indexes the sweeps read hold only the rows a sweep can find: the pauses with a
deadline, a reminder due, an unread reply or a resolution time (``PAUSE_TIME_INDEXES``), the
ends not told yet (``UNTOLD_ENDS_INDEX``). A database uses a partial index only for a query it
can prove stays inside the index's WHERE; a sweep whose statement lost that proof (a parameter
where SQLite needs the literal, a comparison dropped) would read every pending pause, or
every execution, at each sweep. Each sweep's statement, as the store sends it, is planned here:
on SQLite by ``EXPLAIN QUERY PLAN``, on PostgreSQL as the generic plan asyncpg's prepared
statement keeps, with sequential scans priced out; both on tables holding 3,000 waiting pauses
and runs going on, analyzed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, insert, text

from bot.store.database import Database
from bot.store.sql import SqlStore
from bot.store.tables import executions, pauses
from tests.databases import BACKENDS, database

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)

Sweep = Callable[[SqlStore], Awaitable[Any]]

SWEEPS: dict[str, tuple[Sweep, str]] = {
    "deadlines": (lambda s: s.roots_with_due_pauses(NOW), "ix_cs_pauses_status_closes"),
    "unread replies": (lambda s: s.unread_replies(NOW), "ix_cs_pauses_status_unread"),
    "reminders": (lambda s: s.due_nudges(NOW), "ix_cs_pauses_status_nudge"),
    "retention": (lambda s: s.delete_resolved_before(NOW), "ix_cs_pauses_status_resolved"),
    "recovery": (
        lambda s: s.roots_needing_recovery(NOW - timedelta(minutes=5)),
        "ix_cs_pauses_status_resolved",
    ),
    "untold ends": (lambda s: s.untold_roots(NOW), "ix_cs_executions_told"),
}


WAITING = 3000
"""Pauses waiting with no deadline, reminder or reply, and runs going on: what the sweeps'
indexes no longer hold, and what a sweep that missed them would read."""


def _waiting(n: int) -> dict[str, Any]:
    return {
        "pause_id": f"p{n:031d}",
        "tenant_id": "T0TEAM",
        "idempotency_key": f"k{n}",
        "root_execution_id": f"r{n}",
        "execution_id": f"r{n}",
        "thread_id": f"t{n}",
        "owner_id": "U0OWNER",
        "status": "PENDING",
        "is_sent": True,
        "answered_by": "HUMAN",
        "role": "approvers",
        "channel": "slack",
        "agent": "refunds",
        "tool": "refund",
        "call_id": f"c{n}",
        "node_id": "tools",
        "ask": "{}",
        "asked_at": NOW,
    }


def _going_on(n: int) -> dict[str, Any]:
    return {
        "execution_id": f"r{n}",
        "root_execution_id": f"r{n}",
        "thread_id": f"t{n}",
        "tenant_id": "T0TEAM",
        "owner_id": "U0OWNER",
        "workflow": "refunds",
        "status": "PAUSED",
        "input": "{}",
        "created_at": NOW,
        "updated_at": NOW,
    }


@pytest.fixture(params=BACKENDS)
async def opened(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        async with opened.engine.begin() as connection:
            await connection.execute(insert(pauses), [_waiting(n) for n in range(WAITING)])
            await connection.execute(insert(executions), [_going_on(n) for n in range(WAITING)])
        async with opened.engine.connect() as connection:
            await connection.execute(text("ANALYZE"))
            await connection.commit()
        yield opened


@contextmanager
def sent() -> Iterator[list[str]]:
    """The statements sent meanwhile, as the driver got them (on SQLite the store's reads run
    on an engine of their own: every engine is listened to)."""
    statements: list[str] = []

    def before(*arguments: Any) -> None:
        statements.append(arguments[2])

    event.listen(Engine, "before_cursor_execute", before)
    try:
        yield statements
    finally:
        event.remove(Engine, "before_cursor_execute", before)


async def plan(opened: Database, statement: str) -> str:
    async with opened.engine.connect() as connection:
        if opened.engine.dialect.name == "sqlite":
            nulls = tuple(None for _ in range(statement.count("?")))
            rows = await connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", nulls)
            return "\n".join(str(row[-1]) for row in rows)
        # asyncpg's own placeholders ($1, ...): prepared as the store's statement is, planned
        # without its values, with a table scan priced out
        driver = await connection.get_raw_connection()
        raw: Any = driver.driver_connection
        await raw.execute("SET enable_seqscan = off")
        await raw.execute("SET plan_cache_mode = force_generic_plan")
        await raw.execute(f"PREPARE planned AS {statement}")
        count = len((await raw.prepare(statement)).get_parameters())
        nulls_pg = ", ".join("NULL" for _ in range(count))
        rows = await raw.fetch(f"EXPLAIN EXECUTE planned{f'({nulls_pg})' if count else ''}")
        await raw.execute("DEALLOCATE planned")
        await raw.execute("RESET ALL")
        return "\n".join(row[0] for row in rows)


@pytest.mark.parametrize("name", SWEEPS)
async def test_each_sweep_reads_its_partial_index(opened: Database, name: str) -> None:
    sweep, index = SWEEPS[name]
    store = SqlStore(opened)
    with sent() as statements:
        await sweep(store)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert reads, statements
    plans = [await plan(opened, statement) for statement in reads]
    assert any(index in p for p in plans), "\n\n".join(plans)
