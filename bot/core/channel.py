"""What a channel is given and what it answers.

``ChannelOutcome`` is a closed union: ``AwaitReply`` (the question was posted; the call pauses) or
``Decided`` (the channel answered at once; the call never pauses). Match it exhaustively.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel

from bot.core.dtos import ToolCallApprovalAsk, ToolCallApprovalDecision
from bot.core.enums import PauseResolution
from bot.core.errors import SetupError
from bot.core.routes import PauseRoute
from bot.core.sensitive import mask_arguments


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelAsk:
    """A question for a channel. ``pause_id`` is the secret right to answer it."""

    pause_id: str
    value: ToolCallApprovalAsk
    role: str
    owner_id: str
    tenant_id: str
    agent: str = ""
    thread_id: str = ""
    execution_id: str = ""
    expires_at: datetime | None = None
    """When the question expires unanswered (``PauseTiming.expire_after``); None if never."""
    tool_input: type[BaseModel] | None = None
    """The tool's input model: which of ``value.arguments`` are ``Sensitive`` (None: unknown,
    nothing is masked). ``value`` keeps the real arguments, for an edit to start from."""
    route: PauseRoute | None = None
    """Where a policy routed it (``PolicyOutcome.route``): ask ``route.approvers`` instead of
    the channel's, in ``route.conversation`` instead of the channel's; None: as configured."""
    turn: str | None = None
    """Which model turn asked it (``PauseView.turn``): the questions one turn asked together
    share it, and a channel may ask them in one message; None: unknown."""

    @property
    def shown_arguments(self) -> dict[str, Any]:
        """The arguments as a person may read them: ``Sensitive`` fields masked, as in
        /pending, the events, the audit trail, Slack and the web."""
        return mask_arguments(self.tool_input, self.value.arguments)

    def __repr__(self) -> str:  # never print the pause id
        return (
            f"ChannelAsk(role={self.role!r}, tool={self.value.tool!r}, "
            f"call_id={self.value.call_id!r})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelWithdrawal:
    """A question that closed without an answer; ``resolution`` says why. The rest is what
    the question was asked with (as in its ``ChannelAsk``), so a channel can show the closed
    question without reading it back."""

    pause_id: str
    value: ToolCallApprovalAsk
    resolution: PauseResolution
    role: str
    tenant_id: str = ""
    owner_id: str = ""
    agent: str = ""
    thread_id: str = ""
    execution_id: str = ""
    cancelled_by: str | None = None
    """Who stopped the run (``App.cancel(..., by=)``: a Slack user who pressed Stop), for a
    question CANCELLED that way; None otherwise."""

    def __repr__(self) -> str:
        return f"ChannelWithdrawal(role={self.role!r}, resolution={self.resolution!s})"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelAutoDecision:
    """A question an approval policy or a standing grant decided before any person was asked:
    the channel was never sent it, and may tell the requester (``text``: "approved
    automatically by refund-policy: under 50.00"). The rest is what the question was asked
    with (as in its ``ChannelAsk``)."""

    value: ToolCallApprovalAsk
    role: str
    approved: bool
    reason: str
    decided_by: str
    """What decided: the policy's name, or the grant ("grant g-1a2b of U0ANN")."""
    tenant_id: str = ""
    owner_id: str = ""
    agent: str = ""
    thread_id: str = ""
    execution_id: str = ""

    @property
    def text(self) -> str:
        verdict = "approved" if self.approved else "rejected"
        return f"{verdict} automatically by {self.decided_by}: {self.reason}"

    def __repr__(self) -> str:
        return f"ChannelAutoDecision(role={self.role!r}, decided_by={self.decided_by!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class _StillWaiting:
    """A question that still waits, as it was asked (as in its ``ChannelAsk``)."""

    pause_id: str
    value: ToolCallApprovalAsk
    role: str
    asked_at: datetime
    expires_at: datetime | None = None
    """When the question expires (``PauseTiming.expire_after``); None if it does not."""
    tenant_id: str = ""
    owner_id: str = ""
    agent: str = ""
    thread_id: str = ""
    execution_id: str = ""
    nudge_key: str = ""
    """Names this reminder or escalation among the question's (``reminder-1``, ``reminder-2``,
    ``escalation``): the same on a resend, so a channel that can look finds what it sent."""
    retried: bool = False
    """A sweep that sent this nudge died before recording it: the channel may have been told
    already. A channel that can check (e.g. by ``nudge_key`` in its thread) sends nothing
    twice; one that cannot sends it again (at least once)."""
    route: PauseRoute | None = None
    """Where a policy routed the question (as in its ``ChannelAsk``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelReminder(_StillWaiting):
    """A question still waiting when a reminder is due (``PauseTiming.remind_after`` and
    ``remind_every``)."""

    reminded: int
    """How many reminders were sent before this one (0 for the first)."""
    escalated: bool = False
    """Whether the question was escalated before this reminder: its escalation approvers
    may answer it too, so the channel reminds them as well."""

    def __repr__(self) -> str:
        return f"ChannelReminder(role={self.role!r}, reminded={self.reminded})"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelEscalation(_StillWaiting):
    """A question still waiting at ``PauseTiming.escalate_after``: the channel asks it where it
    escalates to as well (its escalation approvers may answer it from then on)."""

    def __repr__(self) -> str:
        return f"ChannelEscalation(role={self.role!r})"


@dataclass(frozen=True, slots=True)
class AwaitReply:
    """The question was posted; the call pauses until someone answers it."""


@dataclass(frozen=True, slots=True)
class Decided:
    """The channel decided at once; the call never pauses."""

    decision: ToolCallApprovalDecision | dict[str, Any]


ChannelOutcomeValue = AwaitReply | Decided


class ChannelOutcome:
    """Factory of the two outcomes of ``send``."""

    @staticmethod
    def await_reply() -> AwaitReply:
        return AwaitReply()

    @staticmethod
    def decided(decision: ToolCallApprovalDecision | dict[str, Any]) -> Decided:
        return Decided(decision)


class ChannelOf:
    """Base class of channel roles and their implementations.

    A role (``@channel_role``) subclasses it; an implementation (``@channel``) subclasses the role
    and overrides ``send`` (and ``withdraw`` if it can take a question back, ``remind`` and
    ``escalate`` if it acts on ``PauseTiming``).
    """

    __countersign_abstract__: ClassVar[bool] = True
    escalates: ClassVar[bool] = False
    """An implementation that declares where its questions escalate (e.g. ``slack_channel(...,
    escalate_to=[...])``) sets it: assembly then requires ``escalate_after`` on its role's
    timing or one of its tools' (else the declaration would never be used)."""

    async def send(self, ask: ChannelAsk) -> ChannelOutcomeValue:
        """Post the question; a role has none (assembly refuses an implementation without it)."""
        raise SetupError(
            f"{type(self).__name__} does not implement send(ask): a @channel implements it"
        )

    async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
        """Take a question back; a no-op unless the implementation overrides it."""
        return None

    async def auto_decided(self, decision: ChannelAutoDecision) -> None:
        """Tell the requester that a policy decided the question at once (it was never sent);
        a no-op unless overridden."""
        return None

    async def remind(self, reminder: ChannelReminder) -> None:
        """Remind the approvers of a question still waiting; a no-op unless overridden."""
        return None

    async def escalate(self, escalation: ChannelEscalation) -> None:
        """Ask a question still waiting where it escalates to; a no-op unless overridden."""
        return None
