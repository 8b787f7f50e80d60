"""Our tables (SQLAlchemy Core). Indexes cover every look-up the hot paths make."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    and_,
    literal_column,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.types import TypeDecorator

from bot.core.enums import ExecutionStatus


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend (SQLite keeps no zone).

    On SQLite each value is converted by one function each way (``_sqlite_text``,
    ``_sqlite_moment``) where SQLAlchemy would chain three (this type's method, its SQLite
    ``DATETIME``'s, and the call joining them; a ``%`` format of a dict per value written):
    the same text is stored and the same value read back (``tests/store/test_tables.py``)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(_NAIVE)
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        moment = datetime.fromisoformat(value) if isinstance(value, str) else value
        if not isinstance(moment, datetime):
            raise TypeError(f"not a datetime: {type(moment).__name__}")
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        if _sqlite_default_text(self, dialect):
            return _sqlite_text
        return super().bind_processor(dialect)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Callable[[Any], Any] | None:
        if _sqlite_default_text(self, dialect):
            return _sqlite_moment
        return super().result_processor(dialect, coltype)


_NAIVE = "naive datetimes are not stored; use the application's clock"
_SQLITE_TEXT = sqlite.DATETIME()._storage_format  # type: ignore[no-untyped-call]
"""How SQLAlchemy writes a datetime on SQLite: ``2026-03-01 12:00:00.123456``, microseconds
always, no zone (ours are UTC)."""


def _sqlite_default_text(type_: UtcDateTime, dialect: Dialect) -> bool:
    """Whether ``type_`` on ``dialect`` is SQLite's ``DATETIME`` in its default text (then
    ``_sqlite_text`` and ``_sqlite_moment`` are what SQLAlchemy's processors do)."""
    impl = type_.impl_instance
    return (
        dialect.name == "sqlite"
        and isinstance(impl, sqlite.DATETIME)
        and impl._storage_format == _SQLITE_TEXT
        and not impl._reg
    )


def _sqlite_text(value: datetime | None) -> str | None:
    """``value`` in UTC as SQLite's ``DATETIME`` text (``_SQLITE_TEXT``), put together from
    its fields' digits: ``%`` or ``isoformat`` spend 10-15 thousand instructions formatting
    seven numbers (``sprintf`` each), this a third of that."""
    if value is None:
        return None
    if value.tzinfo is not UTC:
        if value.tzinfo is None:
            raise ValueError(_NAIVE)
        value = value.astimezone(UTC)
    two = _TWO_DIGITS
    return (
        f"{str(10000 + value.year)[1:]}-{two[value.month]}-{two[value.day]} "
        f"{two[value.hour]}:{two[value.minute]}:{two[value.second]}."
        f"{str(1000000 + value.microsecond)[1:]}"
    )


_TWO_DIGITS = tuple(f"{n:02d}" for n in range(100))


def _sqlite_moment(value: str | None) -> datetime | None:
    """A stored ``DATETIME`` text read as SQLAlchemy reads it (``datetime.fromisoformat``),
    made aware UTC. Ours (``_SQLITE_TEXT``: 26 characters, six digits after the ``.``) is read
    with ``+00:00`` put after it, which makes it aware as it is parsed: ``replace(tzinfo=UTC)``
    after the parse costs seven times the parse. Any other text is read the long way."""
    if value is None:
        return None
    if (
        len(value) == 26
        and value[13] == value[16] == ":"  # no zone after the hour or the minute
        and value[19] == "."
        and value[20:].isdigit()  # nor after the second
    ):
        return _from_iso(value + "+00:00")
    moment = _from_iso(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


_from_iso = datetime.fromisoformat


metadata = MetaData()

schema_version = Table(
    "cs_schema_version",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("applied_at", UtcDateTime, nullable=False),
)

pauses = Table(
    "cs_pauses",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("pause_id", String(64), nullable=False, unique=True),
    Column("tenant_id", String(255), nullable=False),
    Column("idempotency_key", String(1024), nullable=False, unique=True),
    Column("root_execution_id", String(64), nullable=False),
    Column("execution_id", String(64), nullable=False),
    Column("thread_id", String(255), nullable=False),
    Column("owner_id", String(255), nullable=False),
    Column("interrupt_id", String(64)),
    Column("status", String(16), nullable=False),
    Column("is_sent", Boolean, nullable=False, default=False),
    Column("resolution", String(16)),
    Column("answered_by", String(16), nullable=False),
    Column("role", String(255), nullable=False),
    Column("channel", String(255), nullable=False),
    Column("agent", String(255), nullable=False),
    Column("tool", String(255), nullable=False),
    Column("call_id", String(255), nullable=False),
    Column("node_id", String(1024), nullable=False),
    Column("item_index", Integer),
    Column("child_execution_id", String(64)),
    Column("tool_loop_iteration", Integer),
    Column("ask", Text, nullable=False),
    Column("answer", Text),
    Column("responder", String(255)),
    Column("tool_result", Text),
    Column("asked_at", UtcDateTime, nullable=False),
    Column("resolved_at", UtcDateTime),
    # the call's place among the tool calls of its model turn (asked at one moment)
    Column("ask_position", Integer),
    # when the pause closes by itself: a quorum's deadline it waits under
    Column("closes_at", UtcDateTime),
    # a free-text reply received (and acknowledged) but not read yet: read after the ack, or by
    # the recovery sweep if the process that received it died first
    Column("unread_reply", Text),
    Column("unread_by", String(255)),
    Column("unread_at", UtcDateTime),
    # reminders and escalation (v6): when the next one is due (or a claimed one is retried),
    # how many reminders were sent, when it was escalated
    Column("nudge_at", UtcDateTime),
    Column("reminders_sent", Integer),
    Column("escalated_at", UtcDateTime),
    # set while a nudge is claimed (v8), until it is recorded as sent: when the claimed nudge
    # fell due. A claim found lapsed was left by an instance that died, and the channel may
    # already have been told
    Column("nudge_claimed_at", UtcDateTime),
    # the trace context the question was asked in (v9): W3C trace-context headers as JSON, for
    # the span that answers it to link to; NULL without OpenTelemetry
    Column("trace_context", String(1024)),
    # where a policy routed the question (v16, ``bot.core.routes.PauseRoute`` as JSON): other
    # approvers, another conversation, a tighter timing; NULL: as its channel asks
    Column("route", Text),
    # the approvals so far of a question that needs several (v17): sealed JSON (who approved
    # which proposal, the standing proposal after an edit), and its version, compared before
    # each write so that two approvers at once are both counted, once each
    Column("approvals", Text),
    Column("approvals_version", Integer),
    # who the question was handed on to (v17): sealed JSON, written over approvals_version too
    Column("handovers", Text),
    Index("ix_cs_pauses_tenant_status_asked", "tenant_id", "status", "asked_at"),
    Index("ix_cs_pauses_root_status", "root_execution_id", "status"),
    Index("ix_cs_pauses_tenant_thread", "tenant_id", "thread_id"),
    # (ix_cs_pauses_status_role_asked: PENDING_BY_ROLE_INDEX, below)
)

PENDING = pauses.c.status == literal_column("'PENDING'")
"""A pause that waits, said with the literal SQLite needs to prove a partial index applies."""
PENDING_BY_ROLE_INDEX = Index(
    "ix_cs_pauses_status_role_asked",
    pauses.c.role,
    pauses.c.asked_at,
    pauses.c.is_sent,
    pauses.c.status,  # constant here; but SQLite reads no row only if the index has every column
    sqlite_where=PENDING,
    postgresql_where=PENDING,
)
"""The pending pauses by role (``/metrics``), read whole, in the order of their role: v21 added
``is_sent``, so the read (with the undelivered) reads no row; v22 keeps only the pending pauses
in it, by role (the status last: the same in every entry, there for SQLite to read no row).
Whole, it took a write at each status change; and with the status its first column,
PostgreSQL, planning a statement before any row was analyzed, chose it to find the pause an id
names, or a tree's waiting pauses: a scan of every pending pause. Keyed by role it still could,
for a statement that says ``'PENDING'`` as a literal (a partial index proven to hold its rows):
the cycle's statements say it as a bound value (``one_statement.WAITING``)."""


def _when_set(name: str, column: str) -> Index:
    """An index on ``(status, column)`` of the pauses whose ``column`` is set (v22).

    Each is read by a sweep that compares ``column`` (``closes_at <= now``, ...), which both
    databases take as implying ``IS NOT NULL``; a pause without that time (most: no deadline, no
    reminder, no unread reply, not closed yet) has no entry, so asking it and closing it write
    nothing there. Whole, each took a write at every status change of every pause: on SQLite,
    a page more in every commit that asks, answers or takes one."""
    where = pauses.c[column].is_not(None)
    return Index(
        name, pauses.c.status, pauses.c[column], sqlite_where=where, postgresql_where=where
    )


PAUSE_TIME_INDEXES = (
    _when_set("ix_cs_pauses_status_resolved", "resolved_at"),
    _when_set("ix_cs_pauses_status_closes", "closes_at"),
    _when_set("ix_cs_pauses_status_unread", "unread_at"),
    _when_set("ix_cs_pauses_status_nudge", "nudge_at"),
)
"""The pauses' partial indexes of v22 (``_when_set``)."""

executions = Table(
    "cs_executions",
    metadata,
    Column("execution_id", String(64), primary_key=True),
    Column("root_execution_id", String(64), nullable=False),
    Column("parent_execution_id", String(64)),
    Column("thread_id", String(255), nullable=False),
    Column("tenant_id", String(255), nullable=False),
    Column("owner_id", String(255), nullable=False),
    Column("workflow", String(255), nullable=False),
    Column("status", String(16), nullable=False),
    Column("input", Text, nullable=False),
    Column("output", Text),
    Column("error", Text),  # why it failed: the error's message, sealed (it may quote payload)
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("told_at", UtcDateTime),  # a root's end, once told to its channels (v5)
    # the stable code of the error that failed it (v11), beside its message in ``error``; NULL
    # for an execution that failed before v11 (its ``error`` reads "[code] message")
    Column("error_code", String(64)),
    Index("ix_cs_executions_tenant_thread", "tenant_id", "thread_id"),
    Index("ix_cs_executions_root", "root_execution_id"),
)

UNTOLD_END = and_(
    executions.c.told_at.is_(None),
    executions.c.parent_execution_id.is_(None),
    # literals, not parameters: SQLite uses a partial index only for a query whose WHERE
    # holds the index's own terms, and it cannot tell what a parameter will be
    executions.c.status.in_([literal_column(f"'{s.value}'") for s in ExecutionStatus if s.ended]),
)
"""A root that ended and whose end was not told yet (``ExecutionStatus.ended``, v5's outbox)."""
UNTOLD_ENDS_INDEX = Index(
    "ix_cs_executions_told",
    executions.c.updated_at,
    sqlite_where=UNTOLD_END,
    postgresql_where=UNTOLD_END,
)
"""The untold ends, oldest first (v22: only they; it held every execution, and every status
change of every run wrote to it)."""

ATTACHED_PREFIX = "langgraph:"
"""The workflow name of an attached graph's executions: ``langgraph:<graph name>``."""

LIVE_ATTACHED = and_(
    executions.c.status.in_(["RUNNING", "PAUSED"]),
    executions.c.workflow.like(f"{ATTACHED_PREFIX}%"),
)
Index(
    "ux_cs_executions_live_attached_thread",
    executions.c.tenant_id,
    executions.c.thread_id,
    executions.c.workflow,
    unique=True,
    sqlite_where=LIVE_ATTACHED,
    postgresql_where=LIVE_ATTACHED,
)
"""One live execution per thread of an attached graph (v10): of two instances starting one at
once, the second insert fails, atomically, on SQLite and PostgreSQL alike."""

pause_answers = Table(
    "cs_pause_answers",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("tenant_id", String(255), nullable=False),
    Column("root_execution_id", String(64), nullable=False),
    Column("execution_id", String(64), nullable=False),
    Column("idempotency_key", String(1024), nullable=False, unique=True),
    Column("pause_id", String(64)),
    Column("step", Text, nullable=False),
    Column("role", String(255), nullable=False),
    Column("answered_by", String(16), nullable=False),
    Column("responder", String(255)),
    Column("resolution", String(16), nullable=False),
    Column("asked_at", UtcDateTime, nullable=False),
    Column("resolved_at", UtcDateTime, nullable=False),
    Column("decision", Text),
    Column("pause_seq", BigInteger, nullable=False),
    Column("ask_position", Integer),
    Column("ran_with", Text),  # the arguments the approved tool was run with, masked
    Column("approvals", Text),  # every approval given before it closed, masked (v17)
    Column("handovers", Text),  # who it was handed on to before it closed (v17)
    Index("ix_cs_pause_answers_tenant_root", "tenant_id", "root_execution_id", "pause_seq"),
)

leases = Table(
    "cs_leases",
    metadata,
    Column("root_execution_id", String(64), primary_key=True),
    Column("owner", String(255), nullable=False),
    Column("acquired_at", UtcDateTime, nullable=False),
    # no index on expires_at (v22 dropped it): the table holds only the runs going on now, read
    # whole by the sweep that asks which are live; the index cost two writes a pass
    Column("expires_at", UtcDateTime, nullable=False),
    # on SQLite the rows are kept in their key's b-tree (v22): a lease taken or given up writes
    # one page, where a table with row ids wrote its rows' and its key's
    sqlite_with_rowid=False,
)

message_refs = Table(
    "cs_message_refs",
    metadata,
    # where a channel's approval message is (one per pause): the channel finds it by pause, or
    # by the conversation and thread a reply comes in; ``reference`` is the channel's own
    # (Slack: ts, thread_ts); ``closed_at`` once the message shows an outcome; ``turn``: the
    # model turn whose questions may share the message, ``shared`` once it asks several (v19)
    Column("pause_id", String(64), primary_key=True),
    Column("tenant_id", String(255), nullable=False),
    Column("channel", String(255), nullable=False),
    Column("conversation", String(255), nullable=False),
    Column("thread", String(255), nullable=False),
    Column("role", String(255), nullable=False),
    Column("reference", JSON, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("closed_at", UtcDateTime),
    Column("turn", String(64)),
    Column("shared", Boolean),
    Index("ix_cs_message_refs_thread", "conversation", "thread", "closed_at"),
    Index("ix_cs_message_refs_turn", "turn"),
)

model_calls = Table(
    "cs_model_calls",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("tenant_id", String(255), nullable=False),
    Column("root_execution_id", String(64), nullable=False),
    Column("execution_id", String(64), nullable=False),
    Column("workflow", String(255), nullable=False),
    Column("caller", String(255), nullable=False),
    Column("model", String(255), nullable=False),
    Column("input_tokens", Integer, nullable=False, default=0),
    Column("output_tokens", Integer, nullable=False, default=0),
    Column("cost", Float, nullable=False, default=0.0),
    Column("pause_key", String(1024)),
    Column("in_execution_spend", Boolean, nullable=False, default=False),
    Column("at", UtcDateTime, nullable=False),
    Index("ix_cs_model_calls_tenant_at", "tenant_id", "at"),
    Index("ix_cs_model_calls_root", "root_execution_id"),
    Index("ix_cs_model_calls_workflow_at", "tenant_id", "workflow", "at"),
)

launches = Table(
    "cs_launches",
    metadata,
    Column("launch_key", String(1024), primary_key=True),
    Column("root_execution_id", String(64), nullable=False),
    Column("started_at", UtcDateTime, nullable=False),
    Index("ix_cs_launches_root", "root_execution_id"),
)

tool_runs = Table(
    "cs_tool_runs",
    metadata,
    # a tool an attached graph runs (v10): started before it runs, its result (sealed like every
    # payload) saved after, so a pass run again after a crash never runs it twice
    Column("run_key", String(1024), primary_key=True),
    Column("tenant_id", String(255), nullable=False),
    Column("root_execution_id", String(64), nullable=False),
    Column("tool", String(255), nullable=False),
    Column("started_at", UtcDateTime, nullable=False),
    Column("result", Text),
    Column("finished_at", UtcDateTime),
    Index("ix_cs_tool_runs_root", "root_execution_id"),
)

grants = Table(
    "cs_grants",
    metadata,
    # a standing grant (v12): an approver's "approve and allow similar" for one tool of a role in
    # one tenant, within a scope and a constraint on the arguments (sealed: it may quote
    # customer data), until it expires, for at most max_uses uses (counted atomically)
    Column("grant_id", String(64), primary_key=True),
    Column("tenant_id", String(255), nullable=False),
    Column("role", String(255), nullable=False),
    Column("tool", String(255), nullable=False),
    Column("granted_by", String(255), nullable=False),
    Column("scope_thread_id", String(255)),
    Column("scope_owner_id", String(255)),
    Column("scope_agent", String(255)),
    Column("argument_constraint", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("expires_at", UtcDateTime, nullable=False),
    Column("max_uses", Integer),
    Column("uses", Integer, nullable=False, default=0),
    Column("revoked_at", UtcDateTime),
    Column("revoked_by", String(255)),
    Index("ix_cs_grants_tenant_role_tool", "tenant_id", "role", "tool", "expires_at"),
)

installations = Table(
    "cs_installations",
    metadata,
    # a chat workspace's installation of the app by OAuth (v13): the latest one per installer
    # (user_id) and per workspace the bot's own row (user_id ""); an org-wide install has team
    # "" and its enterprise id. The document holds the tokens: sealed like every payload
    Column("client_id", String(64), primary_key=True),
    Column("enterprise_id", String(64), primary_key=True),
    Column("team_id", String(64), primary_key=True),
    Column("user_id", String(64), primary_key=True),
    Column("installed_at", UtcDateTime, nullable=False),
    Column("document", Text, nullable=False),
)

oauth_states = Table(
    "cs_oauth_states",
    metadata,
    # an OAuth install's state (v13), one use: its keyed hash only (the state itself is the
    # installer's browser's), consumed by deleting it
    Column("state_key", String(128), primary_key=True),
    Column("issued_at", UtcDateTime, nullable=False),
    Index("ix_cs_oauth_states_issued", "issued_at"),
)

outbox = Table(
    "cs_outbox",
    metadata,
    # what a channel owes a person (v14): a note, a line in a thread, an update of a message, a
    # run's end, a question whose post got no answer; kept until delivered or moot. ``entry_id``
    # is the owner's key (owing a thing twice is owing it once); ``payload`` is sealed like
    # every payload (it quotes what was said); ``due_at`` is when it is tried next (a claim
    # moves it on: one instance delivers it at a time); ``attempts`` how often it was tried
    Column("entry_id", String(128), primary_key=True),
    Column("channel", String(64), nullable=False),
    Column("kind", String(64), nullable=False),
    Column("tenant_id", String(255), nullable=False),
    Column("pause_id", String(64)),
    Column("payload", Text, nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("due_at", UtcDateTime, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("last_error", String(255)),
    Index("ix_cs_outbox_due", "channel", "due_at"),
)

batch_lines = Table(
    "cs_batch_lines",
    metadata,
    # what a person's last batch did, one line per question (v20): shown on their Home until
    # their next batch; ``said`` is sealed like every payload (it quotes questions' titles)
    Column("tenant_id", String(255), primary_key=True),
    Column("user_id", String(255), primary_key=True),
    Column("said", Text, nullable=False),
    Column("kept_at", UtcDateTime, nullable=False),
)

workspace_settings = Table(
    "cs_workspace_settings",
    metadata,
    # what a workspace's admin set for one of the application's implementations (v15): where
    # its questions are asked and who answers them (and once escalated, who else and where),
    # over the defaults the code gives; NULL: the default. Ids only (conversations, users and
    # user groups): kept in clear
    Column("tenant_id", String(255), primary_key=True),
    Column("implementation", String(255), primary_key=True),
    Column("conversation", String(64)),
    Column("approvers", JSON),
    Column("escalate_to", JSON),
    Column("escalation_conversation", String(64)),
    Column("updated_by", String(64), nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

delegations = Table(
    "cs_delegations",
    metadata,
    # a standing delegation (v17): the delegate may answer what the delegator may answer, in one
    # tenant, until ends_at (or until ended)
    Column("delegation_id", String(64), primary_key=True),
    Column("tenant_id", String(255), nullable=False),
    Column("delegator", String(255), nullable=False),
    Column("delegate", String(255), nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("ends_at", UtcDateTime, nullable=False),
    Column("ended_at", UtcDateTime),
    Column("ended_by", String(255)),
    # its delegate was told it started / ended early (v18): NULL while a channel still owes it
    Column("started_told_at", UtcDateTime),
    Column("ended_told_at", UtcDateTime),
    # the telling of its start or end is held by a taker until then (v20): one that died
    # before recording it told leaves it to be told again once this passed
    Column("telling_until", UtcDateTime),
    Index("ix_cs_delegations_tenant_delegate", "tenant_id", "delegate", "ends_at"),
)
