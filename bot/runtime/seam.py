"""The pause seam: a tool call that names a channel asks it before the tool runs.

The node body before ``interrupt()`` re-runs on every pass, so everything here is keyed by the
step's idempotency key (``root execution + checkpoint ns + "#" + index``): a re-run finds the same
pause record and never sends twice. The decision is always read from the pause record, never
from the resume value, so a stale or forged resume value cannot answer anything.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from dataclasses import dataclass
from typing import assert_never

from langgraph.types import interrupt

from bot.core.channel import AwaitReply, ChannelAsk, ChannelOf, Decided
from bot.core.context import StepContext
from bot.core.dtos import ToolCallApprovalAsk, ToolCallApprovalDecision
from bot.core.enums import PauseResolution, PauseStatus
from bot.core.errors import AgentFailedError, DtoValidationError
from bot.runtime.assembly import ToolBinding
from bot.runtime.decisions import audit_view, validate_decision
from bot.runtime.frame import RunFrame
from bot.runtime.services import Runtime
from bot.runtime.withdrawals import withdraw
from bot.store.records import NewPause, PauseAnswer, PauseRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class Taken:
    """The step took a decision. ``first_take`` is False if an earlier run had taken it."""

    decision: ToolCallApprovalDecision
    responder: str | None
    record: PauseRecord
    first_take: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Closed:
    """The pause closed without an answer (withdrawn or cancelled)."""

    resolution: PauseResolution


@dataclass(frozen=True, slots=True, kw_only=True)
class PausePlace:
    """Where in the tree a pause waits."""

    agent: str
    checkpoint_ns: str
    index: int = 0
    tool_loop_iteration: int | None = None
    item_index: int | None = None
    child_execution_id: str | None = None


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
    record = frame.answered.get(key) or await runtime.store.get_or_create(
        NewPause(
            pause_id=secrets.token_hex(16),
            tenant_id=frame.tenant_id,
            idempotency_key=key,
            root_execution_id=frame.root_execution_id,
            execution_id=frame.execution_id,
            thread_id=frame.thread_id,
            owner_id=frame.owner_id,
            answered_by=binding.answered_by,
            role=binding.role_name,
            channel=binding.channel.name if binding.channel else binding.role_name,
            agent=place.agent,
            ask=ask,
            node_id=place.checkpoint_ns,
            item_index=place.item_index,
            child_execution_id=place.child_execution_id,
            tool_loop_iteration=place.tool_loop_iteration,
            asked_at=runtime.clock.now(),
        )
    )
    if record.status is PauseStatus.PENDING and not record.is_sent:
        record = await _send(runtime, binding, frame, record, place)
    settled = await _settle(runtime, record)
    if settled is not None:
        return settled
    interrupt({"pause_key": key})
    # resumed: the answer was recorded by app.resume before this pass began
    settled = await _settle(runtime, await _reload(runtime, key))
    if settled is None:
        raise RuntimeError(f"execution {frame.execution_id} was resumed without an answer")
    return settled


async def _reload(runtime: Runtime, key: str) -> PauseRecord:
    record = await runtime.store.find_by_key(key)
    if record is None:
        raise RuntimeError("a pause record disappeared while its step was waiting")
    return record


async def _settle(runtime: Runtime, record: PauseRecord) -> Taken | Closed | None:
    """Take a resolved pause; None while it is still waiting."""
    while True:
        match record.status:
            case PauseStatus.PENDING:
                return None
            case PauseStatus.CANCELLED:
                return Closed(resolution=record.resolution or PauseResolution.CANCELLED)
            case PauseStatus.TAKEN:
                return _taken(record, first_take=False)
            case PauseStatus.RESOLVED:
                if await runtime.store.take(record.pause_id):
                    return _taken(
                        dataclasses.replace(record, status=PauseStatus.TAKEN), first_take=True
                    )
                record = await _reload(runtime, record.idempotency_key)
            case _:
                assert_never(record.status)


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
) -> PauseRecord:
    """Send the question once and record its outcome; returns the record as it then is."""
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
    )
    # A launch may cancel this branch while send is returning: the send and the record of its
    # outcome finish anyway, so a question that was posted is known and can be taken back.
    status = await asyncio.shield(
        _send_and_record(runtime, binding, frame, record, place, channel, ask)
    )
    if status is PauseStatus.PENDING:  # the usual case: sent, waiting; no need to read it again
        return dataclasses.replace(record, is_sent=True)
    return await _reload(runtime, record.idempotency_key)


async def _send_and_record(
    runtime: Runtime,
    binding: ToolBinding,
    frame: RunFrame,
    record: PauseRecord,
    place: PausePlace,
    channel: ChannelOf,
    ask: ChannelAsk,
) -> PauseStatus | None:
    """Send, record the outcome; the status it then has (None: read it again)."""
    assert binding.channel is not None
    try:
        outcome = await channel.send(ask)
    except Exception as error:
        raise AgentFailedError(
            f"the channel {binding.channel.name} failed to send the question for the tool "
            f"{record.ask.tool}: {type(error).__name__}: {error}",
            agent=place.agent,
            execution_id=frame.execution_id,
        ) from error
    match outcome:
        case Decided(decision=raw):
            await _decide_at_once(runtime, binding, record, raw, place, frame)
            return None
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
) -> None:
    try:
        decision = validate_decision(
            raw, tool_input=binding.spec.input, arguments=record.ask.arguments
        )
    except DtoValidationError as error:
        raise AgentFailedError(
            f"the channel {record.channel} decided with an invalid decision: {error.message}",
            agent=place.agent,
            execution_id=frame.execution_id,
        ) from error
    await runtime.store.decide_at_once(
        record.pause_id,
        PauseAnswer(decision=decision.model_dump(mode="json"), responder=None),
        runtime.clock.now(),
        audit_decision=audit_view(decision, binding.spec.input),
    )
