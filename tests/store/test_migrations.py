"""Migrations from a database an earlier version made: v3 → v4 moves Slack's message references
into ``cs_message_refs``, v6 adds the reminders' columns, v7 the pending gauge's index (v21: with
``is_sent``), v8 when a nudge was claimed, v9 the trace context, v10 the attached graphs' tool
runs and one live execution per thread; on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Index,
    MetaData,
    String,
    Table,
    insert,
    inspect,
    select,
)

from bot.store.database import Database
from bot.store.message_refs import SqlMessageRefs
from bot.store.migrations import MIGRATIONS, apply_migrations
from bot.store.records import MessageRefRecord
from bot.store.tables import (
    UtcDateTime,
    executions,
    leases,
    message_refs,
    pauses,
    schema_version,
)
from tests.databases import BACKENDS, database

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=7)

v3_slack_messages = Table(
    "cs_slack_messages",
    MetaData(),
    Column("pause_id", String(64), primary_key=True),
    Column("tenant_id", String(255), nullable=False),
    Column("channel_id", String(64), nullable=False),
    Column("ts", String(64), nullable=False),
    Column("thread_ts", String(64)),
    Column("role", String(255), nullable=False),
    Column("implementation", String(255), nullable=False),
    Column("closed", Boolean, nullable=False, default=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ux_cs_slack_messages_channel_ts", "channel_id", "ts", unique=True),
    Index("ix_cs_slack_messages_tenant_open", "tenant_id", "closed"),
)
"""``cs_slack_messages`` as v1 to v3 made it."""


def pause_id(seed: str) -> str:
    return (seed * 32)[:32]


def slack_row(seed: str, ts: str, **values: Any) -> dict[str, Any]:
    return {
        "pause_id": pause_id(seed),
        "tenant_id": "T0TEAM",
        "channel_id": "C0APPROVALS",
        "ts": ts,
        "thread_ts": None,
        "role": "approvers",
        "implementation": "slack-refunds",
        "closed": False,
        "created_at": NOW,
        "updated_at": NOW,
        **values,
    }


V3_SLACK_ROWS = [
    slack_row("a", "1.1"),  # starts its thread
    slack_row("b", "1.2", thread_ts="1.1", created_at=LATER, updated_at=LATER),  # posted in it
    slack_row("c", "2.1", closed=True, updated_at=LATER),  # shows its outcome
]


def make_v3(connection: Connection, rows: list[dict[str, Any]]) -> None:
    """The schema as v3 left it (our tables, and Slack's message references) holding ``rows``."""
    apply_migrations(connection, schema_version, MIGRATIONS[:3], NOW)
    v3_slack_messages.create(connection)
    if rows:
        connection.execute(insert(v3_slack_messages), rows)


@pytest.fixture(params=BACKENDS)
async def v3_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    """A database at v3 holding ``V3_SLACK_ROWS``."""
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(make_v3, V3_SLACK_ROWS)
        yield opened


async def test_v4_moves_slack_s_message_references_into_message_refs(
    v3_database: Database,
) -> None:
    assert await v3_database.migrate(LATER) == len(MIGRATIONS) == 22
    refs = SqlMessageRefs(v3_database)

    assert await refs.get("a" * 32) == MessageRefRecord(
        pause_id="a" * 32,
        tenant_id="T0TEAM",
        channel="slack-refunds",
        conversation="C0APPROVALS",
        thread="1.1",
        role="approvers",
        reference={"ts": "1.1", "thread_ts": None},
        created_at=NOW,
    )
    in_thread = await refs.get("b" * 32)
    assert in_thread is not None and in_thread.reference == {"ts": "1.2", "thread_ts": "1.1"}
    closed = await refs.get("c" * 32)
    assert closed is not None and closed.closed_at == LATER and closed.thread == "2.1"
    found = await refs.open_in_thread("C0APPROVALS", "1.1")
    assert [r.pause_id for r in found] == ["a" * 32, "b" * 32]
    assert await refs.open_in_thread("C0APPROVALS", "2.1") == []


async def test_v4_drops_the_old_table_and_a_second_migrate_does_nothing(
    v3_database: Database,
) -> None:
    await v3_database.migrate(LATER)
    assert await v3_database.migrate(LATER) == len(MIGRATIONS)

    async with v3_database.engine.connect() as connection:
        tables = await connection.run_sync(lambda c: set(inspect(c).get_table_names()))
        versions = await connection.run_sync(
            lambda c: list(c.execute(select(schema_version.c.version)).scalars())
        )
    assert "cs_message_refs" in tables and "cs_slack_messages" not in tables
    assert sorted(versions) == list(range(1, len(MIGRATIONS) + 1))
    assert len(await SqlMessageRefs(v3_database).open_in_thread("C0APPROVALS", "1.1")) == 2


async def test_v8_adds_when_a_nudge_was_claimed(v3_database: Database) -> None:
    await v3_database.migrate(LATER)
    async with v3_database.engine.connect() as connection:
        columns = await connection.run_sync(lambda c: inspect(c).get_columns("cs_pauses"))
    assert "nudge_claimed_at" in {c["name"] for c in columns}


async def test_v7_adds_the_index_the_pending_gauge_reads(v3_database: Database) -> None:
    await v3_database.migrate(LATER)
    async with v3_database.engine.connect() as connection:
        indexes = await connection.run_sync(lambda c: inspect(c).get_indexes("cs_pauses"))
    found = {i["name"]: i["column_names"] for i in indexes}
    assert found["ix_cs_pauses_status_role_asked"] == ["role", "asked_at", "is_sent", "status"]


def _v20_with_v7_s_index(connection: Connection) -> None:
    """The schema as v20 left it: the pending gauge's index without ``is_sent``."""
    apply_migrations(connection, schema_version, MIGRATIONS[:20], NOW)
    connection.exec_driver_sql("DROP INDEX ix_cs_pauses_status_role_asked")
    connection.exec_driver_sql(
        "CREATE INDEX ix_cs_pauses_status_role_asked ON cs_pauses (status, role, asked_at)"
    )


@pytest.mark.parametrize("backend", BACKENDS)
async def test_v21_puts_is_sent_in_the_pending_gauge_s_index_once(
    backend: str, tmp_path: Path
) -> None:
    """The pending-by-role read counts the undelivered too: the index holds ``is_sent`` so the
    read stays on the index (on SQLite, a covering index: no row read)."""
    async with database(backend, tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(_v20_with_v7_s_index)
        assert await opened.migrate(LATER) == len(MIGRATIONS)
        assert await opened.migrate(LATER) == len(MIGRATIONS)  # idempotent
        async with opened.engine.connect() as connection:
            indexes = await connection.run_sync(lambda c: inspect(c).get_indexes("cs_pauses"))
            found = {i["name"]: i["column_names"] for i in indexes}
            # v22 keeps only the pending pauses in it, by role (PENDING_BY_ROLE_INDEX)
            assert found["ix_cs_pauses_status_role_asked"] == [
                "role",
                "asked_at",
                "is_sent",
                "status",
            ]
            if backend == "sqlite":
                plan = await connection.exec_driver_sql(
                    "EXPLAIN QUERY PLAN SELECT role, count(*), min(asked_at), "
                    "sum(CASE WHEN is_sent = 0 THEN 1 ELSE 0 END) FROM cs_pauses "
                    "WHERE status = 'PENDING' GROUP BY role ORDER BY role"
                )
                details = " ".join(str(row[-1]) for row in plan)
                assert "COVERING INDEX ix_cs_pauses_status_role_asked" in details, details


LEASE = {"root_execution_id": "r1", "owner": "instance-a", "acquired_at": NOW, "expires_at": LATER}

WHOLE_INDEXES_OF_V21 = {
    "ix_cs_pauses_status_resolved": "cs_pauses (status, resolved_at)",
    "ix_cs_pauses_status_closes": "cs_pauses (status, closes_at)",
    "ix_cs_pauses_status_unread": "cs_pauses (status, unread_at)",
    "ix_cs_pauses_status_nudge": "cs_pauses (status, nudge_at)",
    "ix_cs_pauses_status_role_asked": "cs_pauses (status, role, asked_at, is_sent)",
    "ix_cs_executions_told": "cs_executions (told_at, updated_at)",
    "ix_cs_leases_expires": "cs_leases (expires_at)",
}


V21_LEASES = """CREATE TABLE cs_leases (
    root_execution_id VARCHAR(64) NOT NULL, owner VARCHAR(255) NOT NULL,
    acquired_at DATETIME NOT NULL, expires_at DATETIME NOT NULL, PRIMARY KEY (root_execution_id)
)"""
"""SQLite's ``cs_leases`` as v1 to v21 made it: a table with row ids."""


def _v21_with_whole_indexes(connection: Connection) -> None:
    """The schema as v21 left it: the sweeps' indexes whole, the leases' expiry indexed (and on
    SQLite the leases in a table with row ids), a lease held."""
    apply_migrations(connection, schema_version, MIGRATIONS[:21], NOW)
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("DROP TABLE cs_leases")
        connection.exec_driver_sql(V21_LEASES)
    connection.execute(insert(leases).values(LEASE))
    for name, on in WHOLE_INDEXES_OF_V21.items():
        connection.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")
        connection.exec_driver_sql(f"CREATE INDEX {name} ON {on}")


def _index_definitions(connection: Connection) -> dict[str, str]:
    if connection.dialect.name == "sqlite":
        rows = connection.exec_driver_sql(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        )
    else:
        rows = connection.exec_driver_sql("SELECT indexname, indexdef FROM pg_indexes")
    return {str(name): str(definition) for name, definition in rows}


def _leases_made(connection: Connection) -> str:
    """How SQLite made ``cs_leases`` (its ``CREATE TABLE``); on PostgreSQL, nothing."""
    if connection.dialect.name != "sqlite":
        return ""
    made = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'cs_leases'"
    return str(connection.exec_driver_sql(made).scalar())


@pytest.mark.parametrize("backend", BACKENDS)
async def test_v22_keeps_only_the_rows_each_sweep_reads_in_its_index_once(
    backend: str, tmp_path: Path
) -> None:
    """The sweeps' indexes become partial (a pause without that time, a run not ended or told,
    has no entry to write), the leases' expiry index goes, SQLite's leases are kept by their
    key alone, the lease held is still held; a second migrate changes nothing."""
    async with database(backend, tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(_v21_with_whole_indexes)
        assert await opened.migrate(LATER) == len(MIGRATIONS) == 22
        assert await opened.migrate(LATER) == len(MIGRATIONS)  # idempotent
        async with opened.engine.connect() as connection:
            found = await connection.run_sync(_index_definitions)
            held = (await connection.execute(select(leases))).mappings().all()
            made = await connection.run_sync(_leases_made)
    assert [dict(row) for row in held] == [LEASE]
    assert backend != "sqlite" or "WITHOUT ROWID" in made, made
    assert "ix_cs_leases_expires" not in found
    assert "WHERE" in found["ix_cs_pauses_status_role_asked"]  # status = 'PENDING'
    assert "'PENDING'" in found["ix_cs_pauses_status_role_asked"]
    for name, column in {
        "ix_cs_pauses_status_resolved": "resolved_at",
        "ix_cs_pauses_status_closes": "closes_at",
        "ix_cs_pauses_status_unread": "unread_at",
        "ix_cs_pauses_status_nudge": "nudge_at",
    }.items():
        assert f"{column} IS NOT NULL" in found[name], found[name]
    told = found["ix_cs_executions_told"]
    assert "told_at IS NULL" in told and "COMPLETED" in told and "told_at," not in told, told


@pytest.mark.parametrize("kind", BACKENDS)
async def test_v4_copies_every_row_of_a_table_larger_than_a_batch(
    kind: str, tmp_path: Path
) -> None:
    rows = [slack_row(f"{n:04d}", f"{n}.0") for n in range(1203)]
    async with database(kind, tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(make_v3, rows)

        await opened.migrate(LATER)

        refs = SqlMessageRefs(opened)
        for n in (0, 499, 500, 1000, 1202):
            found = await refs.get(pause_id(f"{n:04d}"))
            assert found is not None and found.thread == f"{n}.0"


async def test_a_new_database_has_message_refs_and_no_slack_table(tmp_path: Path) -> None:
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'new.db'}") as opened:
        await opened.migrate(NOW)
        async with opened.engine.connect() as connection:
            tables = await connection.run_sync(lambda c: set(inspect(c).get_table_names()))
    assert "cs_message_refs" in tables
    assert not {t for t in tables if t.startswith("cs_slack_")}


async def test_v5_counts_the_ends_before_it_as_told(tmp_path: Path) -> None:
    """An execution that ended before v5 is not told again; one still running will be."""
    async with database("sqlite", tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(make_v3, [])
            await connection.run_sync(_v4_only)
            for execution_id, status in (("done", "COMPLETED"), ("busy", "RUNNING")):
                await connection.execute(
                    insert(executions).values(
                        execution_id=execution_id,
                        root_execution_id=execution_id,
                        thread_id="t",
                        tenant_id="acme",
                        owner_id="U1",
                        workflow="w",
                        status=status,
                        input="{}",
                        created_at=NOW,
                        updated_at=NOW,
                    )
                )
        assert await opened.migrate(LATER) == len(MIGRATIONS)
        async with opened.engine.connect() as connection:
            told = dict(
                (await connection.execute(select(executions.c.execution_id, executions.c.told_at)))
                .tuples()
                .all()
            )
    assert told == {"done": NOW, "busy": None}


def _v4_only(connection: Connection) -> None:
    apply_migrations(connection, schema_version, MIGRATIONS[:4], NOW)


def _v5_without_nudges(connection: Connection) -> None:
    """The pauses table as v5 left it: without v6's columns and index."""
    apply_migrations(connection, schema_version, MIGRATIONS[:5], NOW)
    connection.exec_driver_sql("DROP INDEX ix_cs_pauses_status_nudge")
    for name in ("nudge_at", "reminders_sent", "escalated_at"):
        connection.exec_driver_sql(f"ALTER TABLE cs_pauses DROP COLUMN {name}")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_v6_adds_the_reminders_columns_once(backend: str, tmp_path: Path) -> None:
    async with database(backend, tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(_v5_without_nudges)
        assert await opened.migrate(LATER) == len(MIGRATIONS)
        assert await opened.migrate(LATER) == len(MIGRATIONS)  # idempotent
        async with opened.engine.connect() as connection:
            columns, indexes = await connection.run_sync(
                lambda c: (
                    {column["name"] for column in inspect(c).get_columns(pauses.name)},
                    {index["name"] for index in inspect(c).get_indexes(pauses.name)},
                )
            )
    assert {"nudge_at", "reminders_sent", "escalated_at"} <= columns
    assert "ix_cs_pauses_status_nudge" in indexes


def _v8_without_trace_context(connection: Connection) -> None:
    """The pauses table as v8 left it, with a question asked then (no trace context)."""
    apply_migrations(connection, schema_version, MIGRATIONS[:8], NOW)
    connection.exec_driver_sql("ALTER TABLE cs_pauses DROP COLUMN trace_context")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_v9_adds_the_trace_context_column_once(backend: str, tmp_path: Path) -> None:
    async with database(backend, tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(_v8_without_trace_context)
        assert await opened.migrate(LATER) == len(MIGRATIONS)
        assert await opened.migrate(LATER) == len(MIGRATIONS)  # idempotent
        async with opened.engine.connect() as connection:
            columns = await connection.run_sync(
                lambda c: {column["name"] for column in inspect(c).get_columns(pauses.name)}
            )
    assert "trace_context" in columns


def _v9_without_attached_graphs(connection: Connection) -> None:
    """The schema as v9 left it: no tool runs, no one-live-execution-per-thread index."""
    apply_migrations(connection, schema_version, MIGRATIONS[:9], NOW)
    connection.exec_driver_sql("DROP INDEX ux_cs_executions_live_attached_thread")
    connection.exec_driver_sql("DROP TABLE cs_tool_runs")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_v10_adds_the_tool_runs_and_the_live_thread_index_once(
    backend: str, tmp_path: Path
) -> None:
    async with database(backend, tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(_v9_without_attached_graphs)
        assert await opened.migrate(LATER) == len(MIGRATIONS)
        assert await opened.migrate(LATER) == len(MIGRATIONS)  # idempotent
        async with opened.engine.connect() as connection:
            tables, indexes = await connection.run_sync(
                lambda c: (
                    set(inspect(c).get_table_names()),
                    {index["name"]: index for index in inspect(c).get_indexes(executions.name)},
                )
            )
    assert "cs_tool_runs" in tables
    assert indexes["ux_cs_executions_live_attached_thread"]["unique"]


def _v18_refs(connection: Connection) -> None:
    """``cs_message_refs`` as v18 left it (no turn, no shared) holding a turn's message of two
    questions, a question alone, and one posted in that question's thread."""
    apply_migrations(connection, schema_version, MIGRATIONS[:18], NOW)
    connection.exec_driver_sql("DROP INDEX ix_cs_message_refs_turn")
    connection.exec_driver_sql("ALTER TABLE cs_message_refs DROP COLUMN turn")
    connection.exec_driver_sql("ALTER TABLE cs_message_refs DROP COLUMN shared")
    old = Table(
        "cs_message_refs",
        MetaData(),
        *(Column(c.name, c.type) for c in message_refs.c if c.name not in ("turn", "shared")),
    )

    def row(seed: str, thread: str, ts: str, thread_ts: str | None = None) -> dict[str, Any]:
        return {
            "pause_id": pause_id(seed),
            "tenant_id": "T0TEAM",
            "channel": "slack-refunds",
            "conversation": "C0APPROVALS",
            "thread": thread,
            "role": "approvers",
            "reference": {"ts": ts, "thread_ts": thread_ts},
            "created_at": NOW,
            "closed_at": None,
        }

    rows = [row("a", "1.1", "1.1"), row("b", "1.1", "1.1"), row("c", "1.1", "1.2", "1.1")]
    connection.execute(insert(old), [*rows, row("d", "3.1", "3.1")])


@pytest.mark.parametrize("backend", BACKENDS)
async def test_v19_marks_the_references_of_a_message_asking_several_as_shared(
    backend: str, tmp_path: Path
) -> None:
    async with database(backend, tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(_v18_refs)
        assert await opened.migrate(LATER) == len(MIGRATIONS)
        assert await opened.migrate(LATER) == len(MIGRATIONS)  # idempotent
        refs = SqlMessageRefs(opened)
        found = {seed: await refs.get(pause_id(seed)) for seed in "abcd"}
    assert {seed: ref is not None and ref.shared for seed, ref in found.items()} == {
        "a": True,  # one turn's message, asked before v19: its updates read its questions
        "b": True,
        "c": False,  # in the same thread, a message of its own
        "d": False,
    }
    assert all(ref is not None and ref.turn is None for ref in found.values())
