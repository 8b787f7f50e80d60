"""Consulting a question's approval policy before it is sent (``policy=`` on a role or tool).

The policy runs in the pause's frame (its deps from the container, ``ExecutionContext`` the
pause's), once the pause record exists and before its channel is sent anything. Its decision is
acted on only by recording it: an approval or a rejection closes the record (DECIDED) before the
tool runs, so a re-entered step finds the recorded outcome and never asks the policy again; a
pass that died before recording it asks the policy again, as nothing was acted on.

Fail-closed: a policy that raises, returns something else, or decides what the question does not
take is logged as ``policy.failed`` and the question is asked, never approved.
"""

from __future__ import annotations

import inspect
from typing import Any, assert_never

from langgraph.errors import GraphInterrupt

from bot.components.specs import PolicySpec, spec_of
from bot.core.channel import ChannelAutoDecision
from bot.core.context import StepContext
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import PauseAnswerer
from bot.core.field_errors import failure_text
from bot.core.policy import (
    ApproveAtOnce,
    AskPerson,
    PolicyAsk,
    PolicyDecision,
    RejectAtOnce,
    RouteTo,
)
from bot.core.routes import PauseRoute, looser_times
from bot.core.timing import PauseTiming
from bot.runtime.assembly import MAX_REQUIRED_APPROVALS, ToolBinding
from bot.runtime.frame import RunFrame
from bot.runtime.services import Runtime, log
from bot.runtime.withdrawals import tell_channel
from bot.store.records import PauseRecord


class PolicyFailed(Exception):
    """What a policy did that cannot be acted on; the question is asked instead."""


async def policy_decision(
    runtime: Runtime, binding: ToolBinding, frame: RunFrame, record: PauseRecord
) -> tuple[str, ToolCallApprovalDecision | PauseRoute] | None:
    """The decision ``record``'s policy takes at once, or where it routes the question, with
    the policy's name; None when a person is to be asked as usual (no policy, the policy asks,
    or it failed)."""
    policy = binding.policy
    spec = spec_of(policy)
    if policy is None or not isinstance(spec, PolicySpec):
        return None
    try:
        decided = await _decide(runtime, policy, _ask_of(binding, frame, record))
        decision = _as_decision(decided, record, binding)
    except GraphInterrupt:
        raise
    except Exception as error:  # fail-closed: never an approval
        _log_failed(runtime, spec.name, record, error)
        return None
    runtime.metrics.policy_decided(spec.name, _outcome_label(decision))
    return None if decision is None else (spec.name, decision)


def _outcome_label(decision: ToolCallApprovalDecision | PauseRoute | None) -> str:
    if decision is None:
        return "asked"
    if isinstance(decision, PauseRoute):
        return "routed"
    return "approved" if decision.approved else "rejected"


async def tell_decided(
    runtime: Runtime, record: PauseRecord, *, decided_by: str, decision: ToolCallApprovalDecision
) -> None:
    """Tell the question's channel (best-effort, after the decision is recorded) that a policy
    or a grant (``decided_by``: its name) decided it, for the requester's thread."""
    told = ChannelAutoDecision(
        value=record.ask,
        role=record.role,
        approved=decision.approved,
        reason=decision.reason or "",
        decided_by=decided_by,
        tenant_id=record.tenant_id,
        owner_id=record.owner_id,
        agent=record.agent,
        thread_id=record.thread_id,
        execution_id=record.execution_id,
    )
    await tell_channel(runtime, record, "auto-decided", lambda c: c.auto_decided(told))


def _ask_of(binding: ToolBinding, frame: RunFrame, record: PauseRecord) -> PolicyAsk:
    step = StepContext(
        node_id=record.node_id, call_id=record.ask.call_id, idempotency_key=record.idempotency_key
    )
    return PolicyAsk(
        tool=record.ask.tool,
        arguments=dict(record.ask.arguments),
        call_id=record.ask.call_id,
        role=record.role,
        agent=record.agent,
        context=frame.context(step),
        asked_at=record.asked_at,
        tool_input=binding.spec.input,
    )


async def _decide(runtime: Runtime, policy: type, ask: PolicyAsk) -> PolicyDecision:
    """What ``policy`` decides (a composed one: its parts, combined); ``PolicyFailed`` for an
    answer that is no ``PolicyDecision``."""
    spec = spec_of(policy)
    if isinstance(spec, PolicySpec) and spec.combine is not None:
        return combined(spec.combine, [await _decide(runtime, p, ask) for p in spec.parts])
    instance: Any = runtime.container.create(policy, ask.context)
    decided = instance.decide(ask)
    if inspect.isawaitable(decided):
        decided = await decided
    if not isinstance(decided, AskPerson | ApproveAtOnce | RejectAtOnce | RouteTo):
        raise PolicyFailed(
            f"decide returned {type(decided).__name__}, not PolicyOutcome.ask() / "
            ".approve(reason) / .reject(reason) / .route(...)"
        )
    return decided


def combined(combine: str, decisions: list[PolicyDecision]) -> PolicyDecision:
    """``all``: a rejection if any rejects, an approval if all approve (their reasons joined),
    else ask; ``first``: the first that does not ask, else ask."""
    if combine == "first":
        return next((d for d in decisions if not isinstance(d, AskPerson)), AskPerson())
    rejected = [d for d in decisions if isinstance(d, RejectAtOnce)]
    if rejected:
        return rejected[0]
    approved = [d for d in decisions if isinstance(d, ApproveAtOnce)]
    if decisions and len(approved) == len(decisions):
        return ApproveAtOnce("; ".join(d.reason for d in approved))
    return next((d for d in decisions if isinstance(d, RouteTo)), AskPerson())


def _as_decision(
    outcome: PolicyDecision, record: PauseRecord, binding: ToolBinding
) -> ToolCallApprovalDecision | PauseRoute | None:
    """The decision a policy's answer is, or its route (None: ask a person as usual);
    ``PolicyFailed`` for one without a reason, that the question does not take, or a route
    that would not narrow."""
    match outcome:
        case AskPerson():
            return None
        case RouteTo():
            return _as_route(outcome, binding)
        case ApproveAtOnce(reason=reason):
            decision = ToolCallApprovalDecision(approved=True, reason=_reason(reason))
        case RejectAtOnce(reason=reason):
            decision = ToolCallApprovalDecision(approved=False, reason=_reason(reason))
        case _:
            assert_never(outcome)
    if not record.ask.allows(decision):
        kind = "approve" if decision.approved else "reject"
        raise PolicyFailed(f"the question does not take {kind}")
    return decision


def _as_route(route: RouteTo, binding: ToolBinding) -> PauseRoute:
    """A policy's route as kept with the pause; ``PolicyFailed`` for one that names nothing,
    names an approver or conversation that is no id, or loosens the timing."""
    approvers = tuple(route.approvers)
    if not all(isinstance(a, str) and a.strip() for a in approvers):
        raise PolicyFailed("a route's approvers are non-empty ids")
    conversation = route.conversation
    if conversation is not None and (not isinstance(conversation, str) or not conversation):
        raise PolicyFailed("a route's conversation is a non-empty id")
    timing = route.timing
    if timing is not None:
        if not isinstance(timing, PauseTiming) or timing.problems():
            raise PolicyFailed("a route's timing is a PauseTiming whose times make sense")
        looser = looser_times(timing, binding.timing)
        if looser:
            raise PolicyFailed(f"a route only tightens the timing, not {', '.join(looser)}")
    routed = PauseRoute(
        approvers=approvers,
        conversation=conversation,
        timing=timing,
        required_approvals=_required(route.required_approvals, binding),
    )
    if routed.is_empty:
        raise PolicyFailed(
            "a route names approvers, a conversation, a timing or the approvals required"
        )
    return routed


def _required(count: object, binding: ToolBinding) -> int | None:
    """A route's ``required_approvals``: a whole number from the role's to the most one call
    may need, and several only where several people answer; ``PolicyFailed`` otherwise (a
    route only narrows: fewer approvers than the role's is no route)."""
    if count is None:
        return None
    role = binding.role
    least = 1 if role is None else role.required_approvals
    if (
        not isinstance(count, int)
        or isinstance(count, bool)
        or not least <= count <= MAX_REQUIRED_APPROVALS
    ):
        raise PolicyFailed(
            f"a route's required_approvals is a whole number from the role's ({least}) to "
            f"{MAX_REQUIRED_APPROVALS}, not {count!r}"
        )
    if count > 1 and binding.answered_by is PauseAnswerer.THREAD_OWNER:
        raise PolicyFailed(
            f"a route's required_approvals={count} needs that many approvers, and the "
            "question's only answerer is its thread's owner"
        )
    return count


def _reason(reason: object) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise PolicyFailed("an automatic decision says why: give a non-empty reason")
    return reason.strip()


def _log_failed(runtime: Runtime, policy: str, record: PauseRecord, error: Exception) -> None:
    runtime.metrics.policy_decided(policy, "failed")
    log.warning(
        "policy.failed: %s; the question is asked (execution_id=%s tenant_id=%s policy=%s)",
        failure_text(error),
        record.execution_id,
        record.tenant_id,
        policy,
        extra={
            "execution_id": record.execution_id,
            "tenant_id": record.tenant_id,
            "role": record.role,
            "policy": policy,
            "outcome": "policy-failed",
        },
    )
