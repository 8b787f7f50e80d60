"""What an approval policy is asked and what it answers (no I/O).

A policy (``@policy(name="refund-policy", ...)``, named by ``policy=`` on a role or a tool) is
consulted before a question is sent to a person. Its ``decide(ask)`` (sync or async) returns a
closed union: ``AskPerson`` (the default: the question is sent as usual), ``ApproveAtOnce``
or ``RejectAtOnce`` (decided at once, with a reason, recorded like any decision), or
``RouteTo`` (asked, of other approvers, elsewhere or sooner: kept with the pause). Match it
exhaustively.

Fail-closed: a policy that raises, or returns anything else, is logged (``policy.failed``) and
the question is asked — a policy's failure is never an approval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from pydantic import BaseModel

from bot.core.context import ExecutionContext
from bot.core.sensitive import mask_arguments
from bot.core.timing import PauseTiming

POLICY_RESPONDER_PREFIX: Final = "policy:"
"""How the audit trail names a policy as the one who decided (``policy:refund-policy``): Slack
and web user ids never hold a colon, so a person is never taken for a policy."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyAsk:
    """The question a policy decides, before any person sees it."""

    tool: str
    arguments: dict[str, Any]
    """The call's arguments, unmasked (a policy may read what it decides on)."""
    call_id: str
    role: str
    """The name of the role whose question it is."""
    agent: str
    """Our agent's name, or the attached graph's."""
    context: ExecutionContext
    """The pause's frame: tenant, owner (who asked for the work), execution and step."""
    asked_at: datetime
    """When the question was asked, by the App's clock (a time window's policy reads it)."""
    tool_input: type[BaseModel] | None = None

    @property
    def tenant_id(self) -> str:
        return self.context.tenant.tenant_id

    @property
    def owner_id(self) -> str:
        """Who asked for the work (the requester)."""
        return self.context.owner_id

    @property
    def shown_arguments(self) -> dict[str, Any]:
        """The arguments with ``Sensitive`` fields masked, for a reason a person reads."""
        return mask_arguments(self.tool_input, self.arguments)

    def __repr__(self) -> str:
        return f"PolicyAsk(role={self.role!r}, tool={self.tool!r}, call_id={self.call_id!r})"


@dataclass(frozen=True, slots=True)
class AskPerson:
    """Ask a person, as if there were no policy (the default)."""


@dataclass(frozen=True, slots=True)
class ApproveAtOnce:
    """Approve at once; ``reason`` is recorded and shown ("approved automatically by
    refund-policy: under 50.00")."""

    reason: str


@dataclass(frozen=True, slots=True)
class RejectAtOnce:
    """Reject at once; ``reason`` is what the agent and the audit read."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteTo:
    """Ask a person, but whom, where and how soon the policy says (``bot.core.routes``):
    ``approvers`` instead of the channel's, in ``conversation`` instead of the channel's, on a
    tighter ``timing``, needing ``required_approvals`` distinct approvers (at least the role's).
    Kept with the pause; ``reason`` is logged."""

    approvers: tuple[str, ...] = ()
    conversation: str | None = None
    timing: PauseTiming | None = None
    reason: str = ""
    required_approvals: int | None = None


PolicyDecision = AskPerson | ApproveAtOnce | RejectAtOnce | RouteTo


class PolicyOutcome:
    """Factory of what ``decide`` returns."""

    @staticmethod
    def ask() -> AskPerson:
        return AskPerson()

    @staticmethod
    def approve(reason: str) -> ApproveAtOnce:
        return ApproveAtOnce(reason)

    @staticmethod
    def reject(reason: str) -> RejectAtOnce:
        return RejectAtOnce(reason)

    @staticmethod
    def route(
        *,
        approvers: Sequence[str] = (),
        conversation: str | None = None,
        timing: PauseTiming | None = None,
        reason: str = "",
        required_approvals: int | None = None,
    ) -> RouteTo:
        """Ask other ``approvers`` (the channel's ids), in another ``conversation``, on a
        tighter ``timing`` (each time at most the tool's or role's), or of more approvers
        (``required_approvals``: at least the role's, four eyes for the calls that matter): at
        least one of them."""
        return RouteTo(
            approvers=tuple(approvers),
            conversation=conversation,
            timing=timing,
            reason=reason,
            required_approvals=required_approvals,
        )


def policy_responder(policy: str) -> str:
    """The responder an automatic decision by ``policy`` is recorded with."""
    return f"{POLICY_RESPONDER_PREFIX}{policy}"


def policy_of_responder(responder: str | None) -> str | None:
    """The policy that decided, from a recorded responder; None for a person or a channel."""
    if responder is None or not responder.startswith(POLICY_RESPONDER_PREFIX):
        return None
    return responder.removeprefix(POLICY_RESPONDER_PREFIX) or None
