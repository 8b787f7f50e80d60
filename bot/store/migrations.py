"""The schema's ordered, versioned migrations (``cs_schema_version``), idempotent.

On PostgreSQL one instance migrates at a time (``SCHEMA_LOCK``); the others then find nothing to
do. Version N is ``MIGRATIONS[N - 1]``; one that has shipped is never edited.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Index,
    MetaData,
    RowMapping,
    String,
    Table,
    and_,
    func,
    insert,
    inspect,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.tables import (
    PAUSE_TIME_INDEXES,
    PENDING_BY_ROLE_INDEX,
    UNTOLD_ENDS_INDEX,
    UtcDateTime,
    batch_lines,
    delegations,
    executions,
    grants,
    installations,
    leases,
    message_refs,
    metadata,
    oauth_states,
    outbox,
    pause_answers,
    pauses,
    schema_version,
    tool_runs,
    workspace_settings,
)

Migration = Callable[[Connection], None]

SCHEMA_LOCK = 727001
"""The PostgreSQL advisory lock every schema step takes, ours and LangGraph's saver's
(``bot.security.postgres_saver``): instances starting at once on a new database take turns.

It is *tried* (``pg_try_advisory_*``) until it is had, never waited for: LangGraph's setup runs
``CREATE INDEX CONCURRENTLY``, which waits for every open transaction to end, and a session
blocked on the lock is one (it would wait for the holder, the holder for it: a deadlock
PostgreSQL does not detect). Between two tries a waiting instance has no transaction open."""
SCHEMA_LOCK_RETRY_SECONDS = 0.05


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


def _v3_unread_replies(connection: Connection) -> None:
    """Replies received before the ack and read after it."""
    _add_missing_columns(
        connection,
        pauses,
        ["unread_reply", "unread_by", "unread_at"],
        [i for i in pauses.indexes if i.name == "ix_cs_pauses_status_unread"],
    )


_legacy_slack_messages = Table(
    "cs_slack_messages",
    MetaData(),
    Column("pause_id", String(64), primary_key=True),
    Column("tenant_id", String(255), nullable=False),
    Column("channel_id", String(64), nullable=False),
    Column("ts", String(64), nullable=False),
    Column("thread_ts", String(64)),
    Column("role", String(255), nullable=False),
    Column("implementation", String(255), nullable=False),
    Column("closed", Boolean, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)
"""Where v1 to v3 kept Slack's message references (as they made it); v4 moves them."""

_COPY_BATCH = 500


def _v4_message_refs(connection: Connection) -> None:
    """Message references in one channel-neutral table owned by the store (``cs_message_refs``).

    A database made before has Slack's in ``cs_slack_messages``: they are copied (every one:
    a closed message is found by its pause too, so that a retried send never posts it again),
    then that table is dropped in the same transaction, so that no stale copy is left for any
    code to read. Rows already there are skipped: on SQLite the driver may run the DDL before
    its transaction begins, so a run cut short may have left some."""
    message_refs.create(connection, checkfirst=True)
    legacy = _legacy_slack_messages
    if not inspect(connection).has_table(legacy.name):
        return
    after = ""
    while True:
        page = (
            connection.execute(
                select(legacy)
                .where(legacy.c.pause_id > after)
                .order_by(legacy.c.pause_id)
                .limit(_COPY_BATCH)
            )
            .mappings()
            .all()
        )
        if not page:
            break
        after = page[-1]["pause_id"]
        copied = set(
            connection.execute(
                select(message_refs.c.pause_id).where(
                    message_refs.c.pause_id.in_([row["pause_id"] for row in page])
                )
            ).scalars()
        )
        rows = [_neutral_slack_ref(row) for row in page if row["pause_id"] not in copied]
        if rows:
            connection.execute(insert(message_refs), rows)
    legacy.drop(connection)


def _neutral_slack_ref(row: RowMapping) -> dict[str, Any]:
    """A ``cs_slack_messages`` row as a ``cs_message_refs`` row: the conversation is the Slack
    channel, the thread the one the message was posted in, else the one it starts (its ts)."""
    return {
        "pause_id": row["pause_id"],
        "tenant_id": row["tenant_id"],
        "channel": row["implementation"],
        "conversation": row["channel_id"],
        "thread": row["thread_ts"] or row["ts"],
        "role": row["role"],
        "reference": {"ts": row["ts"], "thread_ts": row["thread_ts"]},
        "created_at": row["created_at"],
        "closed_at": row["updated_at"] if row["closed"] else None,
    }


def _v5_told_ends(connection: Connection) -> None:
    """The outbox of a run's end: ``told_at`` is set once its channels were told. Runs that had
    ended before this version count as told (nobody is waiting to hear of them now)."""
    told = executions.c.told_at
    index = next(i for i in executions.indexes if i.name == "ix_cs_executions_told")
    _add_missing_columns(connection, executions, ["told_at"], [index])
    connection.execute(
        update(executions)
        .where(told.is_(None), executions.c.status.in_(["COMPLETED", "FAILED", "CANCELLED"]))
        .values(told_at=executions.c.updated_at)
    )


def _v6_nudges(connection: Connection) -> None:
    """Reminders and escalation: when the next is due, how many reminders, when escalated.
    Pauses asked before this version have none due (``nudge_at`` stays NULL)."""
    _add_missing_columns(
        connection,
        pauses,
        ["nudge_at", "reminders_sent", "escalated_at"],
        [i for i in pauses.indexes if i.name == "ix_cs_pauses_status_nudge"],
    )


def _v7_pending_by_role(connection: Connection) -> None:
    """The pending pauses by role (``/metrics``): one grouped read of an index, not of rows."""
    index = next(i for i in pauses.indexes if i.name == "ix_cs_pauses_status_role_asked")
    index.create(connection, checkfirst=True)


def _v8_nudge_claims(connection: Connection) -> None:
    """When the due reminder or escalation was claimed, until it is recorded as sent: a sweep
    that finds a lapsed claim tells the channel it may be a resend (``ChannelReminder.retried``)."""
    _add_missing_columns(connection, pauses, ["nudge_claimed_at"], [])


def _v9_trace_context(connection: Connection) -> None:
    """The trace context a question was asked in, for the span that answers it (in whichever
    process) to link to. Pauses asked before this version have none (NULL)."""
    _add_missing_columns(connection, pauses, ["trace_context"])


def _v10_attached_graphs(connection: Connection) -> None:
    """Attached graphs: their tools' runs (``cs_tool_runs``), and one live execution per thread
    (a partial unique index; ``App.langgraph``'s ``ainvoke`` relies on it)."""
    tool_runs.create(connection, checkfirst=True)
    index = next(i for i in executions.indexes if i.name == "ux_cs_executions_live_attached_thread")
    index.create(connection, checkfirst=True)


def _v11_failure_codes(connection: Connection) -> None:
    """Why an execution failed: the error's code in a column of its own, beside its sealed
    message. Executions that failed before keep their ``error`` as it was ("[code] message",
    sealed: a migration holds no key to open it), read back as code and message."""
    _add_missing_columns(connection, executions, ["error_code"])


def _v12_grants(connection: Connection) -> None:
    """Standing grants (``cs_grants``): who allowed which tool of a role, within what scope
    and bound, until when, how many uses. Idempotent (the table and index if missing)."""
    grants.create(connection, checkfirst=True)


def _v13_installations(connection: Connection) -> None:
    """OAuth installations (``cs_installations``, tokens sealed) and install states
    (``cs_oauth_states``): a Slack app installed in several workspaces. Idempotent."""
    installations.create(connection, checkfirst=True)
    oauth_states.create(connection, checkfirst=True)


def _v14_outbox(connection: Connection) -> None:
    """What the channels owe people (``cs_outbox``): delivered by a worker until done or moot,
    so an outage of the chat service loses no note, line, update or run's end. Idempotent."""
    outbox.create(connection, checkfirst=True)


def _v15_workspace_settings(connection: Connection) -> None:
    """Per-workspace settings (``cs_workspace_settings``): an installation's own approval
    conversation and approvers for an implementation, over the code's. Idempotent."""
    workspace_settings.create(connection, checkfirst=True)


def _v16_pause_routes(connection: Connection) -> None:
    """Where a policy routed a question (``cs_pauses.route``): other approvers, another
    conversation, a tighter timing. Pauses asked before this version have none (NULL)."""
    _add_missing_columns(connection, pauses, ["route"])


def _v17_approvals_and_delegations(connection: Connection) -> None:
    """Several approvals of one question (a role's ``required_approvals``) and questions handed
    on: the approvals and handovers so far and their version on the pause, both in its audit
    entry, and standing delegations (``cs_delegations``). Pauses and entries from before have
    none (NULL)."""
    _add_missing_columns(connection, pauses, ["approvals", "approvals_version", "handovers"])
    _add_missing_columns(connection, pause_answers, ["approvals", "handovers"])
    delegations.create(connection, checkfirst=True)


def _v18_told_delegations(connection: Connection) -> None:
    """Whether a delegation's delegate was told it started and, ended early, that it ended
    (``cs_delegations.started_told_at`` / ``ended_told_at``): one added by the command line
    is told by the serving process. Those from before count as told (nobody is told late)."""
    _add_missing_columns(connection, delegations, ["started_told_at", "ended_told_at"])
    connection.execute(
        update(delegations)
        .where(delegations.c.started_told_at.is_(None))
        .values(started_told_at=delegations.c.created_at)
    )
    connection.execute(
        update(delegations)
        .where(and_(delegations.c.ended_at.is_not(None), delegations.c.ended_told_at.is_(None)))
        .values(ended_told_at=delegations.c.ended_at)
    )


def _v19_turn_messages(connection: Connection) -> None:
    """Which model turn's questions a message may ask (``cs_message_refs.turn``) and whether it
    asks several (``shared``): a sibling asked by another instance, or after a restart, joins
    its turn's message, and a question alone in its message is updated without reading the
    others. References from before have no turn (a sibling asked after it gets a message of its
    own); those whose message asks another question too count as shared (a turn's message
    asked before: its updates read its questions, as they did)."""
    index = next(i for i in message_refs.indexes if i.name == "ix_cs_message_refs_turn")
    _add_missing_columns(connection, message_refs, ["turn", "shared"], [index])
    refs = message_refs.c
    threads = (
        select(refs.conversation, refs.thread)
        .group_by(refs.conversation, refs.thread)
        .having(func.count() > 1)
    )
    rows = connection.execute(
        select(refs.pause_id, refs.conversation, refs.thread, refs.reference).where(
            tuple_(refs.conversation, refs.thread).in_(threads)
        )
    ).all()
    messages: dict[tuple[str, str, object], list[str]] = {}
    for row in rows:  # one message: the same conversation, thread and channel's own reference
        where = (row.conversation, row.thread, json.dumps(row.reference, sort_keys=True))
        messages.setdefault(where, []).append(row.pause_id)
    shared = [pause_id for ids in messages.values() if len(ids) > 1 for pause_id in ids]
    for start in range(0, len(shared), 500):
        connection.execute(
            update(message_refs)
            .where(refs.pause_id.in_(shared[start : start + 500]))
            .values(shared=True)
        )


def _v20_delegation_tellings(connection: Connection) -> None:
    """The telling of a delegation's start or end held by whoever took it
    (``cs_delegations.telling_until``): recorded told only after its channels owed it, so a
    process that dies in between leaves it to be told again, never lost. Those from before
    are held by nobody (NULL). And each person's last batch (``cs_batch_lines``), kept across
    restarts. Idempotent."""
    _add_missing_columns(connection, delegations, ["telling_until"])
    batch_lines.create(connection, checkfirst=True)


def _v21_undelivered_in_pending_index(connection: Connection) -> None:
    """The pending pauses by role (``/metrics``) count the undelivered ones too (``is_sent``),
    which v7's index did not hold: the read went to every pending row (51 ms at 100k pending on
    SQLite). The index now covers it again (13 ms). Idempotent: dropped if there, made anew."""
    index = next(i for i in pauses.indexes if i.name == "ix_cs_pauses_status_role_asked")
    index.drop(connection, checkfirst=True)
    index.create(connection)


def _v22_fewer_index_writes(connection: Connection) -> None:
    """Indexes a status change does not write (``PAUSE_TIME_INDEXES``, ``PENDING_BY_ROLE_INDEX``,
    ``UNTOLD_ENDS_INDEX``): the pauses' sweep indexes hold only the pauses with the time each
    sweep compares, the pending gauge's only the pending pauses, the ends' outbox index only the
    untold ends, and the leases' expiry index is gone (its table holds the runs going on, read
    whole); on SQLite the leases are kept by their key alone (``WITHOUT ROWID``). On SQLite a
    pause cycle writes 36 pages to the store's log where it wrote 59 (``cycle_cost --part
    counts``). Each changed index is dropped if there and made anew: idempotent."""
    for index in (*PAUSE_TIME_INDEXES, PENDING_BY_ROLE_INDEX, UNTOLD_ENDS_INDEX):
        index.drop(connection, checkfirst=True)
        index.create(connection)
    connection.execute(text("DROP INDEX IF EXISTS ix_cs_leases_expires"))
    if connection.dialect.name == "sqlite":
        _leases_without_row_ids(connection)


def _leases_without_row_ids(connection: Connection) -> None:
    """SQLite's ``cs_leases`` remade ``WITHOUT ROWID`` (``tables.leases``), its leases kept:
    made anew beside the old, filled from it, put in its place. Nothing when it already is."""
    made = connection.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'cs_leases'"
    ).scalar()
    if made is None or "WITHOUT ROWID" in str(made).upper():
        return
    anew = leases.to_metadata(MetaData(), name="cs_leases_v22")
    anew.create(connection)
    columns = ", ".join(c.name for c in leases.columns)
    connection.exec_driver_sql(
        f"INSERT INTO cs_leases_v22 ({columns}) SELECT {columns} FROM cs_leases"
    )
    connection.exec_driver_sql("DROP TABLE cs_leases")
    connection.exec_driver_sql("ALTER TABLE cs_leases_v22 RENAME TO cs_leases")


MIGRATIONS: Sequence[Migration] = (
    _v1_initial,
    _v2_ask_order_and_deadlines,
    _v3_unread_replies,
    _v4_message_refs,
    _v5_told_ends,
    _v6_nudges,
    _v7_pending_by_role,
    _v8_nudge_claims,
    _v9_trace_context,
    _v10_attached_graphs,
    _v11_failure_codes,
    _v12_grants,
    _v13_installations,
    _v14_outbox,
    _v15_workspace_settings,
    _v16_pause_routes,
    _v17_approvals_and_delegations,
    _v18_told_delegations,
    _v19_turn_messages,
    _v20_delegation_tellings,
    _v21_undelivered_in_pending_index,
    _v22_fewer_index_writes,
)
"""Applied in order; version N is ``MIGRATIONS[N - 1]``. Never edit one that has shipped."""


def apply_migrations(
    connection: Connection, versions: Table, migrations: Sequence[Migration], now: datetime
) -> int:
    """Apply the ``migrations`` newer than the version ``versions`` records (version N is
    ``migrations[N - 1]``), each recorded as applied; returns the newest version."""
    versions.create(connection, checkfirst=True)
    current = connection.execute(select(func.max(versions.c.version))).scalar() or 0
    for version, migrate in enumerate(migrations, start=1):
        if version > current:
            migrate(connection)
            connection.execute(insert(versions).values(version=version, applied_at=now))
    return len(migrations)


def _apply_migrations(connection: Connection, now: datetime) -> int:
    return apply_migrations(connection, schema_version, MIGRATIONS, now)


async def until_taken(try_lock: Callable[[], Awaitable[bool]]) -> None:
    """Try ``try_lock`` until it says the lock is had (see ``SCHEMA_LOCK``: never wait on it)."""
    while True:
        if await try_lock():
            return
        await asyncio.sleep(SCHEMA_LOCK_RETRY_SECONDS)


async def migrate(engine: AsyncEngine, now: datetime) -> int:
    """Bring the schema to the newest version; idempotent. Returns the version.

    On PostgreSQL one instance migrates at a time (``SCHEMA_LOCK``); the others find nothing to
    do once it is their turn.
    """
    if engine.dialect.name != "postgresql":
        async with engine.begin() as connection:
            return await connection.run_sync(_apply_migrations, now)
    version = 0

    async def try_to_migrate() -> bool:
        nonlocal version
        async with engine.begin() as connection:
            lock = f"SELECT pg_try_advisory_xact_lock({SCHEMA_LOCK})"
            if not (await connection.exec_driver_sql(lock)).scalar():
                return False  # the transaction ends here: nothing open while it waits
            version = await connection.run_sync(_apply_migrations, now)
            return True

    await until_taken(try_to_migrate)
    return version
