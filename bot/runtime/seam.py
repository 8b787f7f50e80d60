"""The pause seam: a tool call that names a channel asks it before the tool runs.

The node body before ``interrupt()`` re-runs on every pass, so everything here is keyed by the
step's idempotency key (``root execution + checkpoint ns + "#" + index``): a re-run finds the same
pause record and never sends twice. The decision is always read from the pause record, never
from the resume value, so a stale or forged resume value cannot answer anything.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any, assert_never

from langgraph.types import interrupt
from pydantic import ValidationError

from bot.core.channel import AwaitReply, ChannelAsk, ChannelOf, Decided
from bot.core.context import StepContext
from bot.core.dtos import ToolCallApprovalAsk, ToolCallApprovalDecision, decision_kind
from bot.core.enums import PauseResolution, PauseStatus
from bot.core.errors import AgentFailedError, DtoValidationError, RunInterruptedError
from bot.core.field_errors import failure_text
from bot.core.grants import grant_responder
from bot.core.policy import policy_responder
from bot.core.routes import PauseRoute
from bot.core.tracing import carrier, span
from bot.runtime.assembly import ToolBinding
from bot.runtime.audit_masking import audit_mask
from bot.runtime.decisions import check_reason, invalid_decision
from bot.runtime.edit_checks import validate_for
from bot.runtime.expiry import expire, expires_at, expiry_of, is_due
from bot.runtime.frame import ClosedByDeadline, RunFrame
from bot.runtime.grant_checks import covering_grants, described_grant
from bot.runtime.policies import policy_decision, tell_decided
from bot.runtime.services import Runtime
from bot.runtime.withdrawals import withdraw
from bot.store.closings import DecidedAtOnce, GrantUnavailable
from bot.store.interruptions import is_interruption
from bot.store.records import NewPause, PauseAnswer, PauseRecord, changed


@dataclass(frozen=True, slots=True, kw_only=True)
class Taken:
    """The step took a decision. ``first_take`` is False if an earlier run had taken it."""

    decision: ToolCallApprovalDecision
    responder: str | None
    record: PauseRecord
    first_take: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Closed:
    """The pause closed without an answer (withdrawn, cancelled or expired)."""

    resolution: PauseResolution
    at: datetime | None = None
    """When it expired (an EXPIRED pause)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PausePlace:
    """Where in the tree a pause waits."""

    agent: str
    checkpoint_ns: str
    index: int = 0
    tool_loop_iteration: int | None = None
    item_index: int | None = None
    child_execution_id: str | None = None
    asked_at: datetime | None = None
    """When the model asked for the call (one moment for all the calls of its turn)."""
    position: int | None = None
    """The call's place among the tool calls of its model turn."""


def idempotency_key(frame: RunFrame, place: PausePlace) -> str:
    return f"{frame.root_execution_id}{place.checkpoint_ns}#{place.index}"


async def ask_channel(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    ask: ToolCallApprovalAsk,
    place: PausePlace,
) -> Taken | Closed:
    """Create (or find) the pause, send it once, pause until it is answered, take the answer."""
    key = idempotency_key(frame, place)
    answered = frame.answered.get(key)
    if answered is None and frame.closes_at is not None:
        await _check_deadline(runtime, frame.closes_at, key)
    asked_at = place.asked_at or runtime.clock.now()
    record = answered or await runtime.store.get_or_create(
        new_pause(binding, frame, key, place, ask, asked_at=asked_at)
    )
    sent = await ask_once(runtime, binding, frame, record, place)
    if isinstance(sent, Taken):  # decided at once: this step took it, the tool runs now
        return sent
    record = sent
    settled = await _settle(runtime, binding, record, frame)
    if settled is not None:
        return settled
    expired = await _expire_if_due(runtime, binding, record, frame)
    if expired is not None:
        return expired
    interrupt({"pause_key": key})
    # resumed: the answer was recorded by app.resume before this pass began
    settled = await _settle(runtime, binding, await _reload(runtime, key), frame)
    if settled is None:
        raise RuntimeError(f"execution {frame.execution_id} was resumed without an answer")
    return settled


async def ask_once(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    record: PauseRecord,
    place: PausePlace,
) -> PauseRecord | Taken:
    """Send a waiting question its channel was never sent; the record as it then is, or the
    decision taken when the channel decided at once."""
    if record.status is PauseStatus.PENDING and not record.is_sent:
        by_policy = await policy_decision(runtime, binding, frame, record)
        if by_policy is not None:
            policy, decided = by_policy
            if isinstance(decided, PauseRoute):  # asked, as the policy routed it
                return await _route_then_send(runtime, binding, frame, record, place, decided)
            responder = policy_responder(policy)
            return await _decide_automatically(runtime, binding, record, responder, decided, policy)
        for grant, decision in await covering_grants(runtime, binding, record):
            try:  # the grant's use and the pause's closing: one transaction
                return await _decide_automatically(
                    runtime,
                    binding,
                    record,
                    grant_responder(grant),
                    decision,
                    described_grant(grant_responder(grant)),
                    grant_id=grant.grant_id,
                )
            except GrantUnavailable:  # used up, revoked or expired meanwhile: the next one
                continue
        return await _send(runtime, binding, frame, record, place)
    return record


async def _route_then_send(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    record: PauseRecord,
    place: PausePlace,
    route: PauseRoute,
) -> PauseRecord | Taken:
    """Keep ``route`` with the pause (its times from the route's timing) before anything is
    sent, so every instance and sweep asks and nudges as routed; then send it. A grant never
    decides a routed question: the policy said whom to ask."""
    timing = route.timing
    if timing is not None:
        closes_at = _closes_at(frame.closes_at, timing.expires_at(record.asked_at))
        nudge_at = timing.next_nudge_at(record.asked_at, after=None, escalated=False)
    else:
        closes_at, nudge_at = record.closes_at, record.nudge_at
    routed = await runtime.store.set_route(
        record.pause_id, route, closes_at=closes_at, nudge_at=nudge_at
    )
    if routed is None:  # closed or sent meanwhile (another pass): as it now is
        return await _reload(runtime, record.idempotency_key)
    return await _send(runtime, binding, frame, routed, place)


async def _decide_automatically(
    runtime: Runtime,
    binding: ToolBinding,
    record: PauseRecord,
    responder: str,
    decision: ToolCallApprovalDecision,
    decided_by: str,
    *,
    grant_id: str | None = None,
) -> PauseRecord | Taken:
    """Record a policy's or a grant's decision (PENDING → TAKEN, DECIDED, ``responder`` naming
    it; the grant's use counted with it, ``GrantUnavailable`` when it has none left) before
    anything acts on it, then tell the channel; the record as it is if it was closed
    meanwhile."""
    taken = await _close_decided(
        runtime, binding, record, decision, responder=responder, grant_id=grant_id
    )
    if taken is None:
        return await _reload(runtime, record.idempotency_key)
    if grant_id is not None:
        runtime.metrics.grant_decided(record.role)
    await tell_decided(runtime, taken, decided_by=decided_by, decision=decision)
    return Taken(decision=decision, responder=responder, record=taken, first_take=True)


async def _close_decided(
    runtime: Runtime,
    binding: ToolBinding,
    record: PauseRecord,
    decision: ToolCallApprovalDecision,
    *,
    responder: str | None,
    grant_id: str | None = None,
) -> PauseRecord | None:
    """Close ``record`` as decided at once (PENDING → TAKEN, DECIDED), its audit masked; None
    when it was closed meanwhile."""
    mask = await audit_mask(runtime, record, binding.spec.input)
    return await runtime.store.close(
        record.pause_id,
        DecidedAtOnce(
            answer=PauseAnswer(decision=decision.model_dump(mode="json"), responder=responder),
            audit_decision=mask.decision(decision),
            ran_with=mask.ran_with(decision, record.ask.arguments),
            grant_id=grant_id,
        ),
        at=runtime.clock.now(),
    )


async def _check_deadline(runtime: Runtime, closes_at: datetime, key: str) -> None:
    """After the deadline a branch runs under, only an answer given in time goes on: a pause
    still waiting (or withdrawn, or never asked) raises ``ClosedByDeadline`` for its launch."""
    if runtime.clock.now() < closes_at:
        return
    record = await runtime.store.find_by_key(key)
    if record is None or record.status in (PauseStatus.PENDING, PauseStatus.CANCELLED):
        raise ClosedByDeadline(closes_at)


def new_pause(
    binding: ToolBinding,
    frame: RunFrame,
    key: str,
    place: PausePlace,
    ask: ToolCallApprovalAsk,
    *,
    asked_at: datetime,
    channel: str | None = None,
) -> NewPause:
    """The record of a question asked at ``place`` under ``key``, with the times its tool's or
    role's timing gives it (when it stops taking answers, when it is first nudged), and the
    trace context it is asked in (with OpenTelemetry)."""
    timing = binding.timing
    return NewPause(
        pause_id=secrets.token_hex(16),
        tenant_id=frame.tenant_id,
        idempotency_key=key,
        root_execution_id=frame.root_execution_id,
        execution_id=frame.execution_id,
        thread_id=frame.thread_id,
        owner_id=frame.owner_id,
        answered_by=binding.answered_by,
        role=binding.role_name,
        channel=channel or (binding.channel.name if binding.channel else binding.role_name),
        agent=place.agent,
        ask=ask,
        node_id=place.checkpoint_ns,
        item_index=place.item_index,
        child_execution_id=place.child_execution_id,
        tool_loop_iteration=place.tool_loop_iteration,
        asked_at=asked_at,
        ask_position=place.position,
        closes_at=_closes_at(frame.closes_at, expires_at(binding, asked_at)),
        nudge_at=None
        if timing is None
        else timing.next_nudge_at(asked_at, after=None, escalated=False),
        trace_context=carrier(),  # the pass that asks: its answer's span links there
    )


def _closes_at(deadline: datetime | None, expires_at: datetime | None) -> datetime | None:
    """When the question stops taking answers: its launch's deadline or its own expiry,
    whichever comes first (the store refuses an answer after it; the sweep moves the tree)."""
    if deadline is None or expires_at is None:
        return deadline or expires_at
    return min(deadline, expires_at)


async def _expire_if_due(
    runtime: Runtime, binding: ToolBinding, record: PauseRecord, frame: RunFrame
) -> Taken | Closed | None:
    """A question still waiting at its expiry closes as EXPIRED (its channel told once, by
    the one closer that closed it); ``None`` while it has time left."""
    if not is_due(runtime, binding, record):
        return None
    if await expire(runtime, record) is None:  # answered or closed meanwhile: settle it as is
        return await _settle(
            runtime, binding, await _reload(runtime, record.idempotency_key), frame
        )
    return Closed(resolution=PauseResolution.EXPIRED, at=expiry_of(binding, record))


async def _reload(runtime: Runtime, key: str) -> PauseRecord:
    record = await runtime.store.find_by_key(key)
    if record is None:
        raise RuntimeError("a pause record disappeared while its step was waiting")
    return record


async def _settle(
    runtime: Runtime, binding: ToolBinding, record: PauseRecord, frame: RunFrame
) -> Taken | Closed | None:
    """Take a resolved pause (its audit entry says what an approved call runs with); None
    while it is still waiting."""
    while True:
        match record.status:
            case PauseStatus.PENDING:
                return None
            case PauseStatus.CANCELLED:
                return Closed(resolution=record.resolution or PauseResolution.CANCELLED)
            case PauseStatus.TAKEN:
                return _taken(record, first_take=False)
            case PauseStatus.RESOLVED:
                if await runtime.store.take(
                    record, ran_with=await ran_with(runtime, binding, record)
                ):
                    frame.took.append(record)
                    return _taken(changed(record, status=PauseStatus.TAKEN), first_take=True)
                record = await _reload(runtime, record.idempotency_key)
            case _:
                assert_never(record.status)


async def ran_with(
    runtime: Runtime, binding: ToolBinding, record: PauseRecord
) -> dict[str, Any] | None:
    """What the approved call of ``record`` runs with, masked for the audit trail (None for
    a rejection)."""
    answer = record.answer
    if answer is None or answer.decision is None or not answer.decision.get("approved"):
        return None
    decision = ToolCallApprovalDecision.model_validate(answer.decision)
    mask = await audit_mask(runtime, record, binding.spec.input)
    return mask.ran_with(decision, record.ask.arguments)


def _taken(record: PauseRecord, *, first_take: bool) -> Taken:
    answer = record.answer
    if answer is None or answer.decision is None:
        raise RuntimeError("a taken pause has no decision")
    return Taken(
        decision=ToolCallApprovalDecision.model_validate(answer.decision),
        responder=answer.responder,
        record=record,
        first_take=first_take,
    )


async def _send(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    record: PauseRecord,
    place: PausePlace,
) -> PauseRecord | Taken:
    """Send the question once and record its outcome: the record as it then is, or the
    decision this step took when the channel decided at once."""
    assert binding.channel is not None
    step = StepContext(
        node_id=place.checkpoint_ns,
        call_id=record.ask.call_id,
        idempotency_key=record.idempotency_key,
    )
    channel: ChannelOf = runtime.container.create(binding.channel.cls, frame.context(step))
    ask = ChannelAsk(
        pause_id=record.pause_id,
        value=record.ask,
        role=record.role,
        owner_id=record.owner_id,
        tenant_id=record.tenant_id,
        agent=record.agent,
        thread_id=record.thread_id,
        execution_id=record.execution_id,
        expires_at=expiry_of(binding, record),
        tool_input=binding.spec.input,
        route=record.route,
        turn=record.turn,
    )
    # A launch may cancel this branch while send is returning: the send and the record of its
    # outcome finish anyway, so a question that was posted is known and can be taken back.
    sending = asyncio.ensure_future(
        _send_and_record(runtime, binding, frame, record, place, channel, ask)
    )
    sending.add_done_callback(_retrieved)  # a cancelled branch leaves its outcome unread
    status = await asyncio.shield(sending)
    if isinstance(status, Taken):
        return status
    if status is PauseStatus.PENDING:  # the usual case: sent, waiting; no need to read it again
        return changed(record, is_sent=True)
    return await _reload(runtime, record.idempotency_key)


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Read a shielded send's outcome so that a failure nobody awaited (its branch was
    cancelled meanwhile) is not reported as never retrieved: the recovery sweep asks again."""
    if not task.cancelled():
        task.exception()


async def _send_and_record(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    record: PauseRecord,
    place: PausePlace,
    channel: ChannelOf,
    ask: ChannelAsk,
) -> PauseStatus | Taken | None:
    """Send, record the outcome; the status it then has (None: read it again), or the decision
    taken at once."""
    assert binding.channel is not None
    try:
        with span("channel.send", role=record.role, channel=record.channel):
            outcome = await channel.send(ask)
    except ValidationError as error:
        if error.title != ToolCallApprovalDecision.__name__:
            raise _send_failed(binding, record, place, frame, error) from error
        # the channel built an invalid decision: the same refusal app.resume gives
        refusal = DtoValidationError(invalid_decision(error))
        raise _invalid_at_once(record, place, frame, refusal) from refusal
    except RunInterruptedError:  # e.g. ChannelUnavailableError: asked again by recovery
        raise
    except Exception as error:
        if is_interruption(error):  # the database (or the network) went away meanwhile
            raise RunInterruptedError(
                f"the question for the tool {record.ask.tool} could not be asked now "
                f"({failure_text(error)}); it is asked again",
                execution_id=frame.execution_id,
            ) from error
        raise _send_failed(binding, record, place, frame, error) from error
    match outcome:
        case Decided(decision=raw):
            return await _decide_at_once(runtime, binding, record, raw, place, frame)
        case AwaitReply():
            status = await runtime.store.mark_sent(record.pause_id)
            if status is None:
                # closed while send was returning: this step tells the channel, once
                closed = await _reload(runtime, record.idempotency_key)
                if closed.status is PauseStatus.CANCELLED:
                    await withdraw(runtime, closed, closed.resolution or PauseResolution.CANCELLED)
            return status
        case _:
            raise AgentFailedError(
                f"the channel {binding.channel.name}'s send returned {type(outcome).__name__}; "
                "return ChannelOutcome.await_reply() or ChannelOutcome.decided(...)",
                agent=place.agent,
                execution_id=frame.execution_id,
            )


async def _decide_at_once(
    runtime: Runtime,
    binding: ToolBinding,
    record: PauseRecord,
    raw: object,
    place: PausePlace,
    frame: RunFrame,
) -> Taken | None:
    """Record the channel's decision (PENDING → TAKEN); the step that recorded it took it and
    runs the tool now (a re-run after a crash finds it TAKEN and never runs it again). None if
    the pause was closed meanwhile (read it again)."""
    try:
        decision = validate_for(binding, raw, arguments=record.ask.arguments)
        if not record.ask.allows(decision):  # an attached graph is never sent what it refuses
            allowed = ", ".join(record.ask.allowed_decisions or ())
            raise DtoValidationError(
                f"the question takes only {allowed}, not {decision_kind(decision)}"
            )
        if binding.role is not None:
            check_reason(decision, binding.role.reject_reason)
    except DtoValidationError as error:
        raise _invalid_at_once(record, place, frame, error) from error
    taken = await _close_decided(runtime, binding, record, decision, responder=None)
    if taken is None:
        return None
    return Taken(decision=decision, responder=None, record=taken, first_take=True)


def _send_failed(
    binding: ToolBinding,
    record: PauseRecord,
    place: PausePlace,
    frame: RunFrame,
    error: Exception,
) -> AgentFailedError:
    name = binding.channel.name if binding.channel else record.channel
    return AgentFailedError(
        f"the channel {name} failed to send the question for the tool "
        f"{record.ask.tool}: {failure_text(error)}",
        agent=place.agent,
        execution_id=frame.execution_id,
    )


def _invalid_at_once(
    record: PauseRecord, place: PausePlace, frame: RunFrame, error: DtoValidationError
) -> AgentFailedError:
    return AgentFailedError(
        f"the channel {record.channel} decided with an invalid decision: {error.message}",
        agent=place.agent,
        execution_id=frame.execution_id,
    )
