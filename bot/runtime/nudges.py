"""Reminders and escalation of a question still waiting (``PauseTiming``), sent by the sweep.

Exactly once across instances, and never skipped by a crash: each pause keeps when its next
reminder or escalation is due (``nudge_at``). A sweep that finds one due *claims* it first, with
one conditional update moving ``nudge_at`` from what it read to ``now + NUDGE_CLAIM`` (another
instance reading the same row moves nothing and sends nothing); then it tells the channel; then
it records what was sent and when the next is due, again only if ``nudge_at`` is still its claim.
An instance that dies between the claim and the record leaves ``nudge_at`` at the claim's end:
the sweep after it finds the same nudge due and sends it again. So a crash may send a reminder
twice (the channel was told, the record was not written) but never loses one: at least once
across a crash, exactly once otherwise. A channel that fails or times out is logged
(``channel.remind-failed``) and counted as sent, as ``withdraw`` is: a broken channel is not
retried every tick until the question expires.

An answer or a closing stops them: only PENDING pauses are due, and a claim needs PENDING.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final, assert_never

from bot.core.channel import ChannelEscalation, ChannelReminder
from bot.core.timing import Nudge, PauseTiming
from bot.runtime.services import Runtime
from bot.runtime.withdrawals import tell_channel
from bot.store.records import PauseRecord

NUDGE_CLAIM: Final = timedelta(minutes=2)
"""How long a claimed reminder or escalation waits for its record before a sweep sends it again
(its instance died meanwhile). Longer than a channel's call takes, short against the hours
between reminders."""


async def send_due_nudges(runtime: Runtime) -> int:
    """Send the reminders and escalations due now, each once; how many were sent."""
    now = runtime.clock.now()
    sent = 0
    for record in await runtime.store.due_nudges(now):
        if await _nudge(runtime, record, now):
            sent += 1
    return sent


def _timing_of(runtime: Runtime, record: PauseRecord) -> PauseTiming | None:
    """The timing of the tool's binding, else of the pause's role: an attached graph's
    ``request_approval`` names tools no tool node has, registered only once asked in this
    process, and its questions are nudged after a restart too."""
    binding = runtime.assembly.tool_named(record.ask.tool)
    if binding is not None:
        return binding.timing
    role = runtime.assembly.roles_by_name.get(record.role)
    return None if role is None else role.timing


async def _nudge(runtime: Runtime, record: PauseRecord, now: datetime) -> bool:
    """Claim, send and record the nudge due on ``record``; whether this sweep sent it."""
    seen = record.nudge_at
    assert seen is not None
    if record.closes_at is not None and now >= record.closes_at:
        return False  # past its deadline or expiry: the deadline sweep closes it
    timing = _timing_of(runtime, record)
    escalated = record.escalated_at is not None
    due = (
        None if timing is None else timing.due_nudge(record.asked_at, now=now, escalated=escalated)
    )
    if timing is None or due is None:  # nothing due any more (the timing changed): stop
        await runtime.store.claim_nudge(record.pause_id, seen=seen, until=None)
        return False
    claim = now + NUDGE_CLAIM
    if not await runtime.store.claim_nudge(record.pause_id, seen=seen, until=claim):
        return False  # another instance claimed it
    reminders, escalated_at = record.reminders_sent, record.escalated_at
    match due:
        case Nudge.REMIND:
            await _remind(runtime, record, timing)
            reminders += 1
        case Nudge.ESCALATE:
            await _escalate(runtime, record, timing)
            escalated_at = now
        case _:
            assert_never(due)
    runtime.metrics.nudged(due.value)
    next_at = timing.next_nudge_at(record.asked_at, after=now, escalated=escalated_at is not None)
    await runtime.store.record_nudge(
        record.pause_id,
        claimed=claim,
        reminders_sent=reminders,
        escalated_at=escalated_at,
        next_at=next_at,
    )
    return True


async def _remind(runtime: Runtime, record: PauseRecord, timing: PauseTiming) -> None:
    reminder = ChannelReminder(
        pause_id=record.pause_id,
        value=record.ask,
        role=record.role,
        reminded=record.reminders_sent,
        asked_at=record.asked_at,
        expires_at=timing.expires_at(record.asked_at),
        tenant_id=record.tenant_id,
        owner_id=record.owner_id,
        agent=record.agent,
        thread_id=record.thread_id,
        execution_id=record.execution_id,
    )
    await tell_channel(runtime, record, "remind", lambda channel: channel.remind(reminder))


async def _escalate(runtime: Runtime, record: PauseRecord, timing: PauseTiming) -> None:
    escalation = ChannelEscalation(
        pause_id=record.pause_id,
        value=record.ask,
        role=record.role,
        asked_at=record.asked_at,
        expires_at=timing.expires_at(record.asked_at),
        tenant_id=record.tenant_id,
        owner_id=record.owner_id,
        agent=record.agent,
        thread_id=record.thread_id,
        execution_id=record.execution_id,
    )
    await tell_channel(runtime, record, "escalate", lambda channel: channel.escalate(escalation))
