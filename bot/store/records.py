"""Rows as frozen values: what the repositories take and give."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from operator import attrgetter
from types import MappingProxyType
from typing import Any, Final

from bot.core.approvals import ApprovalEntry, Approvals
from bot.core.delegations import Handover
from bot.core.dtos import ToolCallApprovalAsk
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseResolution, PauseStatus
from bot.core.failures import ExecutionFailure
from bot.core.results import StepRecord
from bot.core.routes import PauseRoute


@dataclass(frozen=True, slots=True, kw_only=True)
class PauseAnswer:
    """How a pause was resolved: the decision and who gave it (``responder``)."""

    decision: dict[str, Any] | None
    responder: str | None
    reply: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NewPause:
    """A pause about to be asked; ``pause_id`` is used only if no record has the key yet."""

    pause_id: str
    tenant_id: str
    idempotency_key: str
    root_execution_id: str
    execution_id: str
    thread_id: str
    owner_id: str
    answered_by: PauseAnswerer
    role: str
    channel: str
    agent: str
    ask: ToolCallApprovalAsk
    node_id: str
    item_index: int | None
    child_execution_id: str | None
    tool_loop_iteration: int | None
    asked_at: datetime
    ask_position: int | None = None
    closes_at: datetime | None = None
    nudge_at: datetime | None = None
    """When its first reminder or escalation is due (``PauseTiming.next_nudge_at``)."""
    trace_context: Mapping[str, str] | None = None
    """The trace context it was asked in (W3C ``traceparent``; ``bot.core.tracing.carrier``):
    the span that answers it links there. ``None`` without OpenTelemetry."""


NO_APPROVALS: Final = Approvals()
"""A pause's approvals before anyone approved it (and of a question one answer closes)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PauseRecord:
    seq: int
    pause_id: str
    tenant_id: str
    idempotency_key: str
    root_execution_id: str
    execution_id: str
    thread_id: str
    owner_id: str
    interrupt_id: str | None
    status: PauseStatus
    is_sent: bool
    resolution: PauseResolution | None
    answered_by: PauseAnswerer
    role: str
    channel: str
    agent: str
    ask: ToolCallApprovalAsk
    node_id: str
    item_index: int | None
    child_execution_id: str | None
    tool_loop_iteration: int | None
    answer: PauseAnswer | None
    tool_result: str | None
    asked_at: datetime
    resolved_at: datetime | None
    ask_position: int | None = None
    closes_at: datetime | None = None
    unread_reply: str | None = None
    unread_by: str | None = None
    nudge_at: datetime | None = None
    """When its next reminder or escalation is due, or a claimed one is retried."""
    reminders_sent: int = 0
    escalated_at: datetime | None = None
    nudge_claimed_at: datetime | None = None
    """Set while a nudge is claimed and not recorded as sent yet: when the claimed nudge fell
    due (a sweep that finds the claim lapsed sends again what fell due then)."""
    trace_context: Mapping[str, str] | None = None
    route: PauseRoute | None = None
    """Where a policy routed it (other approvers, conversation, timing); None: as asked."""
    """The trace context it was asked in, if it was asked in a recorded span."""
    approvals: Approvals = NO_APPROVALS
    """The approvals given so far (a role that needs several)."""
    handovers: tuple[Handover, ...] = ()
    """Who it was handed on to (reassigned; answered under a standing delegation)."""
    row_version: int | None = field(default=None, compare=False)
    """PostgreSQL: the version of the row this record was made from (its ``xmin``: every
    write of the row moves it), where the write that returned it says so (a pass's rest);
    None elsewhere. A write given the record (``close_opening``'s ``known``) then changes the
    row only if nothing else has since (``bot.store.recent_pauses``)."""

    def __repr__(self) -> str:  # never print the pause id
        return (
            f"PauseRecord(seq={self.seq}, tenant_id={self.tenant_id!r}, "
            f"execution_id={self.execution_id!r}, status={self.status!s}, tool={self.ask.tool!r})"
        )

    @property
    def proposed_arguments(self) -> dict[str, Any]:
        """What an approval approves now: the standing proposal after an approver's edit (a
        role that needs several approvals), else the arguments asked. An edit is made of it."""
        proposal = self.approvals.proposal
        return self.ask.arguments if proposal is None else proposal

    @property
    def turn(self) -> str:
        """The model turn that asked it (``PauseView.turn``): its execution and agent, the
        moment the turn asked (one for all its calls) and its place: the agent's tool-loop
        iteration (each call of a native turn is a task of its own node), else its node (an
        attached graph's interrupt, whose questions share it)."""
        place = (
            f"iteration:{self.tool_loop_iteration}"
            if self.tool_loop_iteration is not None
            else f"node:{self.node_id}"
        )
        parts = (self.execution_id, self.agent, str(self.item_index), str(self.child_execution_id))
        return "|".join((*parts, place, self.asked_at.isoformat()))

    @property
    def interrupt_to_resume(self) -> str | None:
        """The interrupt a pass resumes with this pause's answer: known once the pause is
        answered (RESOLVED) and LangGraph has named its interrupt; None otherwise."""
        return self.interrupt_id if self.status is PauseStatus.RESOLVED else None

    @property
    def step(self) -> StepRecord:
        return StepRecord(
            agent=self.agent,
            node=self.node_id,
            tool=self.ask.tool,
            tool_call_id=self.ask.call_id,
            item_index=self.item_index,
            tool_loop_iteration=self.tool_loop_iteration,
        )


def interrupts_to_resume(records: Iterable[PauseRecord]) -> dict[str, tuple[PauseRecord, ...]]:
    """The interrupts a pass resumes, each with its answered pauses in the order asked: an
    interrupt is resumed once every pause it asked is answered. A native step asks one pause
    per interrupt; an attached graph's interrupt may ask several (LangChain's batched
    human-in-the-loop request: one pause per action, one resume for all of them)."""
    answered: dict[str, list[PauseRecord]] = {}
    waiting: set[str] = set()
    for record in records:
        if record.interrupt_id is None:
            continue
        if record.status is PauseStatus.PENDING:
            waiting.add(record.interrupt_id)
        elif record.status is PauseStatus.RESOLVED:
            answered.setdefault(record.interrupt_id, []).append(record)
    return {i: tuple(rs) for i, rs in answered.items() if i not in waiting}


def waiting_on_siblings(records: Iterable[PauseRecord]) -> tuple[PauseRecord, ...]:
    """The answered pauses whose interrupt still waits on another of its questions (an
    attached graph's batched request, answered in part): not resumed yet, but answered."""
    records = tuple(records)
    waiting = {
        r.interrupt_id
        for r in records
        if r.interrupt_id is not None and r.status is PauseStatus.PENDING
    }
    return tuple(
        r for r in records if r.status is PauseStatus.RESOLVED and r.interrupt_id in waiting
    )


_PAUSE_FIELDS: Final = tuple(f.name for f in fields(PauseRecord))
_every_field: Final = attrgetter(*_PAUSE_FIELDS)


def changed(record: PauseRecord, **changes: Any) -> PauseRecord:
    """``dataclasses.replace`` for a pause record at a quarter of its cost: the fields read in
    one call instead of one by one with its checks (every field is an init field), then the
    same ``__init__``. The pause cycle makes four of these (issue 32)."""
    values = dict(zip(_PAUSE_FIELDS, _every_field(record), strict=True))
    values.update(changes)
    return PauseRecord(**values)


@dataclass(frozen=True, slots=True, kw_only=True)
class NewExecution:
    execution_id: str
    root_execution_id: str
    parent_execution_id: str | None
    thread_id: str
    tenant_id: str
    owner_id: str
    workflow: str
    input: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionRow:
    execution_id: str
    root_execution_id: str
    parent_execution_id: str | None
    thread_id: str
    tenant_id: str
    owner_id: str
    workflow: str
    status: ExecutionStatus
    input: dict[str, Any]
    output: Any | None
    error: ExecutionFailure | None
    """Why it failed (status FAILED); None otherwise."""
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditRow:
    """One entry of the permanent audit trail, written once when its pause is resolved."""

    pause_id: str | None
    execution_id: str
    step: StepRecord
    role: str
    answered_by: PauseAnswerer
    responder: str | None
    resolution: PauseResolution
    asked_at: datetime
    resolved_at: datetime
    decision: dict[str, Any] | None
    ran_with: dict[str, Any] | None = None
    approvals: tuple[ApprovalEntry, ...] = ()
    """The approvals it was given before it closed (masked), with their rounds."""
    handovers: tuple[Handover, ...] = ()
    """Who it was handed on to before it closed."""


NO_RESULTS: Final[Mapping[str, str]] = MappingProxyType({})
"""No tool results to save with a pass's last write (``rest``, ``end_tree``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TreePauses:
    """A tree's RESOLVED and PENDING pauses as a pass left them; ``released``: the lease was
    given up in the same transaction."""

    pauses: tuple[PauseRecord, ...]
    released: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenTree:
    """A tree as a holder found it on taking its lease (``execution`` None: unknown)."""

    execution: ExecutionRow | None
    pauses: tuple[PauseRecord, ...]
    released: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ClosedOpening:
    """An answer recorded and its tree opened in one transaction (``close_opening``)."""

    record: PauseRecord | None
    """The pause as the answer closed it; None if it no longer waited (nothing written)."""
    tree: OpenTree | None
    """The tree as ``open_tree`` would have opened it; None if not opened (its lease is held
    elsewhere, or the pause was not closed)."""


ReferenceValue = str | int | float | bool | None
"""A value of a channel's own reference to its message (a flat JSON object)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageRefRecord:
    """Where a channel asked a pause: its approval message, one per pause.

    ``channel`` is the channel implementation's name; ``conversation`` and ``thread`` are what
    the channel finds the message by when a reply comes in (Slack: the conversation id, and the
    thread the message starts or was posted in); ``reference`` is the channel's own (Slack: the
    message's ``ts`` and ``thread_ts``). ``closed_at``: since when it shows an outcome.

    ``turn``: which questions may share the message (the channel's key of one model turn asked
    in one place, at most 64 characters), None for a question that shares none; ``shared``:
    the message asks other questions too, so updating it means reading them (a question whose
    message is its own reads nothing more).
    """

    pause_id: str
    tenant_id: str
    channel: str
    conversation: str
    thread: str
    role: str
    reference: Mapping[str, ReferenceValue]
    created_at: datetime
    closed_at: datetime | None = None
    turn: str | None = None
    shared: bool = False

    def __repr__(self) -> str:  # never print the pause id
        return (
            f"MessageRefRecord(channel={self.channel!r}, conversation={self.conversation!r}, "
            f"thread={self.thread!r}, closed={self.closed})"
        )

    @property
    def closed(self) -> bool:
        return self.closed_at is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class NewToolRun:
    """A tool an attached graph is about to run, keyed by where it runs (``run_key``: the tree,
    the graph's thread, the task and the tool call)."""

    run_key: str
    tenant_id: str
    root_execution_id: str
    tool: str
    at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolRun:
    """A tool's run as recorded: ``first`` when this call recorded its start (it runs now);
    otherwise an earlier pass started it, and ``result`` is what it saved (None: it stopped
    before it could — the tool may have run)."""

    run_key: str
    first: bool
    result: dict[str, Any] | None


class ThreadBusy(Exception):
    """An execution of the attached graph already lives on the thread (``execution_id``): a
    second one is refused by the store, atomically."""

    def __init__(self, execution_id: str) -> None:
        super().__init__(f"execution {execution_id} is live on this thread")
        self.execution_id = execution_id
