"""What execute / resume / list_pending return, the audit trail, and the events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from bot.core.approvals import Approval
from bot.core.budget import Spend
from bot.core.delegations import Handover
from bot.core.dtos import RejectReason, ToolCallApprovalAsk, ToolCallApprovalDecision
from bot.core.enums import ExecutionStatus, PauseAnswerer, PauseResolution, PauseStatus
from bot.core.failures import ExecutionFailure
from bot.core.routes import PauseRoute


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingPause:
    """A waiting pause. ``pause_id`` is given only for a THREAD_OWNER pause."""

    pause_id: str | None
    answered_by: PauseAnswerer
    agent: str
    role: str
    """The name of the role whose question it is (for a concrete ``@channel`` named on a tool
    as is, the channel's own name): what ``PauseView.role`` says of it."""
    ask: ToolCallApprovalAsk
    execution_id: str
    thread_id: str
    asked_at: str
    item_index: int | None = None
    child_execution_id: str | None = None
    owner_id: str | None = None
    expires_at: str | None = None
    """When it expires unanswered (``PauseTiming.expire_after``), ISO 8601; None if never."""
    escalated: bool = False
    """Whether it was escalated: its channel's escalation approvers may answer it too."""
    reminded: int = 0
    """How many reminders were sent about it (``PauseTiming.remind_after``)."""
    delivered: bool = True
    """Whether its channel was given the question; False while it waits, not yet delivered
    (its channel could not be reached: it is asked again once it can)."""
    route: PauseRoute | None = None
    """Where a policy routed it (``PolicyOutcome.route``): its approvers instead of the
    channel's."""
    handovers: tuple[Handover, ...] = ()
    """Who it was handed on to so far (``PauseView.handovers``): a person it was reassigned to
    may answer it."""
    required_approvals: int = 1
    """How many distinct approvers must approve it (``PauseView.required_approvals``)."""
    approvals: tuple[Approval, ...] = ()
    """Who approved what so far (``PauseView.approvals``)."""
    proposal: dict[str, Any] | None = None
    """The arguments proposed now once an approver's edit replaced those asked, masked as
    ``ask``; None while the proposal is the question's own. A list shows it, not
    ``ask.arguments``."""

    @property
    def shown_round(self) -> int:
        """Which proposal a list shows of it (``PauseView.shown_round``): carried back with
        an approval from that list, refused once another edit replaced it."""
        return sum(1 for a in self.approvals if a.edited)

    @property
    def proposed_arguments(self) -> dict[str, Any]:
        """What an approval approves now (masked): the standing proposal, else those asked."""
        return self.ask.arguments if self.proposal is None else self.proposal

    @property
    def channel(self) -> str:
        """The spec's name for ``role`` ("the channel asked": a role's name or a
        ``@channel``'s), kept working; it never names the role's implementation (that is
        ``PauseView.channel``)."""
        return self.role

    def __repr__(self) -> str:
        shown = "<hidden>" if self.pause_id is None else "<owner's>"
        return (
            f"PendingPause(pause_id={shown}, answered_by={self.answered_by!s}, "
            f"agent={self.agent!r}, role={self.role!r}, tool={self.ask.tool!r})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRecord:
    """The step a pause waited in."""

    agent: str
    node: str
    tool: str
    tool_call_id: str
    item_index: int | None = None
    tool_loop_iteration: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PauseAuditEntry:
    """One resolved pause of the permanent audit trail (``record.pauses``)."""

    pause_id: str | None
    execution_id: str
    step: StepRecord
    role: str
    answered_by: PauseAnswerer
    responder: str | None
    resolution: PauseResolution
    asked_at: str
    resolved_at: str
    decision: dict[str, Any] | None
    ran_with: dict[str, Any] | None = None
    """The arguments an approved tool was run with (the approver's changes merged in), masked
    like ``decision``; None when it did not run (rejected, withdrawn, cancelled)."""
    policy: str | None = None
    """The approval policy that decided at once (resolution DECIDED, ``responder``
    ``policy:<name>``, the policy's reason in ``decision``); None when a person or a channel
    answered."""
    grant_id: str | None = None
    """The standing grant that decided at once (resolution DECIDED, ``responder``
    ``grant:<id>:<granter>``); None otherwise."""
    granted_by: str | None = None
    """Who gave that grant."""
    approvals: tuple[Approval, ...] = ()
    """Every approval it was given before it closed (a role's ``required_approvals``), oldest
    first, each with what it approved (masked like ``decision``); voided ones (an edit came
    after) have ``counted`` False. Empty for a question one answer closes."""
    handovers: tuple[Handover, ...] = ()
    """Who it was handed on to before it closed: reassigned by an approver, or answered under a
    standing delegation (``kind``, ``delegation_id``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildExecutionRecord:
    execution_id: str
    workflow: str
    status: ExecutionStatus
    pauses: list[PauseAuditEntry] = field(default_factory=list)
    children: list[ChildExecutionRecord] = field(default_factory=list)
    error: ExecutionFailure | None = None
    """Why this child failed (its status FAILED); None otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionRecord:
    """The execution record: its pauses are the tree's audit trail, in the order asked."""

    execution_id: str
    thread_id: str
    tenant_id: str
    workflow: str
    status: ExecutionStatus
    pauses: list[PauseAuditEntry] = field(default_factory=list)
    children: list[ChildExecutionRecord] = field(default_factory=list)
    spend: Spend = field(default_factory=Spend)  # model calls whose answers steps took, once
    error: ExecutionFailure | None = None
    """Why the execution failed (its status FAILED): the error's code and message; None
    otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionResult:
    thread_id: str
    execution_id: str
    status: ExecutionStatus
    output: Any | None
    pending: list[PendingPause]
    record: ExecutionRecord | None = None
    tenant_id: str = ""
    moved: bool = True
    """Whether this call's own passes moved the tree. False when another call (a concurrent
    answer's, another instance's) had already taken this answer: the result is the tree as
    it then stood, and whoever moved it reports what happened (say a run's end once)."""
    error: ExecutionFailure | None = None
    """Why the execution failed, when its status is FAILED (kept with it: read back the same
    by ``get_result`` on any instance, also when a sweep failed it); None otherwise. ``execute``
    and ``resume`` raise the failure itself: this is its code and message."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionPauseEvent:
    """The execution rests: nothing else can move until one of ``pending`` is answered."""

    tenant_id: str
    thread_id: str
    execution_id: str
    pending: list[PendingPause]


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionResumeEvent:
    """A pause was answered; ``answered_by`` is who answered (owner id or channel answerer).

    ``by_sweep``: the tree was moved by the App's sweep, not by a caller's resume — answers
    recovered after a crash (``answered_by`` empty, resolution REPLIED) or questions closed at
    a quorum's deadline (WITHDRAWN)."""

    tenant_id: str
    thread_id: str
    execution_id: str
    answered_by: str
    resolution: PauseResolution
    by_sweep: bool = False
    answered: tuple[PauseView, ...] = ()
    """The answers this move gave the tree, as recorded (RESOLVED, with their decisions): the
    pauses whose questions a channel now shows as answered. Each answer is in the event of the
    one move that took it (another call's, when a concurrent move took it first)."""
    result: ExecutionResult | None = None
    """Where the tree stands after the move, when the move ran (a run's end is told from it)."""
    error: BaseException | None = None
    """The failure that ended the run in this move, if it failed."""
    end_told: EndTold | None = None
    """Given to the last resume handler only, when the move ended the run and every handler
    before it returned: that handler may record the end told in its own last write (then the
    App makes no write of its own for it). ``None`` for every other handler and move."""


class EndTold:
    """The record that a run's end was told (``told_at``), handed to the last resume handler
    (``ExecutionResumeEvent.end_told``) so that it rides on the handler's own last store write
    instead of costing one more (issue 32: one write less per click).

    The handler that takes it writes ``root_execution_id`` told in the same transaction as the
    last thing it records of this event (``MessageRefs.close_each(..., told=...)``), says nothing
    more of the event after that write, and calls ``carried()`` once it committed. A handler
    that does not (or fails before the write) leaves it to the App, which records the end told
    after the handler returned, as without it: a process that dies first leaves the end untold
    and the sweep tells it again (``Sweeps.tell_untold``)."""

    __slots__ = ("_carried", "root_execution_id")

    def __init__(self, root_execution_id: str) -> None:
        self.root_execution_id = root_execution_id
        """The run whose end to record told (its root execution)."""
        self._carried = False

    def carried(self) -> None:
        """The handler's write that recorded the end told committed."""
        self._carried = True

    @property
    def is_carried(self) -> bool:
        return self._carried


@dataclass(frozen=True, slots=True, kw_only=True)
class PauseView:
    """A pause as its channel's server side sees it (``App.find_pause``): arguments unmasked."""

    pause_id: str
    tenant_id: str
    status: PauseStatus
    resolution: PauseResolution | None
    answered_by: PauseAnswerer
    role: str
    channel: str
    agent: str
    ask: ToolCallApprovalAsk
    tool_input: type[BaseModel] | None
    tool_description: str
    owner_id: str
    thread_id: str
    execution_id: str
    responder: str | None
    decision: ToolCallApprovalDecision | None
    asked_at: str
    reply: str | None = None
    """The free-text reply the answer was read from, when it came from one."""
    expires_at: str | None = None
    """When it expires unanswered (``PauseTiming.expire_after``), ISO 8601; None if never."""
    escalated: bool = False
    """Whether it was escalated (``PauseTiming.escalate_after``): its channel's escalation
    approvers may answer it too."""
    reminded: int = 0
    """How many reminders were sent about it (``PauseTiming.remind_after``)."""
    reject_reason: RejectReason = "optional"
    """Whether a rejection must say why (its role's ``reject_reason``): a Reject form or modal
    requires the reason when ``"required"``."""
    tool_result: str | None = None
    """What the tool returned once it ran after an approval (its text); None before or
    without a run."""
    required_approvals: int = 1
    """How many distinct approvers must approve it (its role's ``required_approvals``)."""
    approvals: tuple[Approval, ...] = ()
    """Who approved what so far, oldest first (a role that needs several approvals); an
    approval voided by a later edit has ``counted`` False."""
    handovers: tuple[Handover, ...] = ()
    """Who it was handed on to (``App.reassign``; a standing delegation it was answered
    under), oldest first: they may answer it too."""
    proposal: dict[str, Any] | None = None
    """The arguments proposed now, once an approver's edit replaced those asked (unmasked, as
    ``ask``); None while the proposal is the question's own. Show it, not ``ask.arguments``:
    the others approve what they are shown."""

    @property
    def shown_round(self) -> int:
        """Which proposal is shown now: how many edits replaced the question's arguments (an
        approval sent back with it is refused once another edit replaced it)."""
        return sum(1 for a in self.approvals if a.edited)

    @property
    def proposed_arguments(self) -> dict[str, Any]:
        """What an approval approves now: the standing proposal, else the arguments asked."""
        return self.ask.arguments if self.proposal is None else self.proposal

    @property
    def still_needed(self) -> int:
        """How many more approvals the standing proposal needs (0 once enough)."""
        return max(0, self.required_approvals - sum(a.counted for a in self.approvals))

    route: PauseRoute | None = None
    """Where a policy routed it (``PolicyOutcome.route``): who may answer and where it is
    asked, instead of its channel's approvers and conversation; None: as configured."""
    turn: str | None = None
    """Which model turn asked it: the questions one turn asked together (an agent's tool calls
    of one model message, an attached graph's one interrupt) share it; a channel may ask them
    in one message. Opaque; None when unknown."""
    ask_position: int | None = None
    """Its place among the questions of its turn (the model's order)."""

    def __repr__(self) -> str:
        return f"PauseView(tool={self.ask.tool!r}, status={self.status!s}, role={self.role!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReceivedReply:
    """A free-text reply kept unread (``App.answer(..., keep_model_replies=True)`` returns it in
    ``ReplyKept.received``), to read after the webhook acknowledged it (``App.read_kept``); the
    recovery sweep reads it if nobody does. ``owner_id`` or ``answered_by`` is who wrote it, as
    the pause is answered."""

    pause_id: str
    tenant_id: str
    reply: str
    owner_id: str | None
    answered_by: str | None

    def __repr__(self) -> str:  # never print the pause id
        return f"ReceivedReply(tenant_id={self.tenant_id!r})"
