"""Reminders and escalation of a question still waiting (``PauseTiming``), sent by the sweep.

Exactly once across instances, and never skipped by a crash: each pause keeps when its next
reminder or escalation is due (``nudge_at``). The sweep sends one only while it holds the
pause's tree (its lease, taken without waiting: a pass running there, here or on another
instance, means the next tick), so a nudge never races the pass that answers or closes the
question. It *claims* the nudge first, with one conditional update moving ``nudge_at`` from
what it read to ``now + NUDGE_CLAIM`` and keeping when the claimed nudge fell due
(``nudge_claimed_at``; another instance reading the same row moves nothing and sends nothing);
then it tells the channel; then it records what was sent and when the next is due, again only
if ``nudge_at`` is still its claim. An instance that dies between the claim and the record
leaves the claim: the sweep after it finds the same nudge due and sends it again, marked
``retried`` with the same ``nudge_key``, so a channel that can look (Slack looks in the
question's thread and the escalation conversation) does not repeat what it already sent, and
one that cannot sends it twice rather than never. A channel that fails or times out is logged
(``channel.remind-failed``) and counted as sent, as ``withdraw`` is: a broken channel is not
retried every tick until the question expires.

A reminder slot at the escalation's moment (remind every hour, escalate at 3 h) is not
skipped: one claim sends that reminder, to whom the reminders went until then, and then the
escalation (``PauseTiming.due_nudges``); the reminders after it are marked ``escalated``, so a
channel reminds its escalation approvers too.

An answer or a closing stops them: only PENDING pauses are due, and a claim needs PENDING.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from typing import Final, assert_never

from bot.core.channel import ChannelEscalation, ChannelReminder
from bot.core.timing import Nudge, PauseTiming
from bot.runtime.services import Runtime, log
from bot.runtime.withdrawals import tell_channel
from bot.store.records import PauseRecord

NUDGE_CLAIM: Final = timedelta(minutes=2)
"""How long a claimed reminder or escalation waits for its record before a sweep sends it again
(its instance died meanwhile). Longer than a channel's call takes, short against the hours
between reminders."""


HoldTree = Callable[[str], AbstractAsyncContextManager[bool]]
"""Holds a tree if it is free now, without waiting (``Engine.beside``)."""


async def send_due_nudges(runtime: Runtime, hold: HoldTree) -> int:
    """Send the reminders and escalations due now, each once, each under its tree's lease;
    how many were sent (a tree busy with a pass is tried again on the next tick)."""
    now = runtime.clock.now()
    sent = 0
    for record in await runtime.store.due_nudges(now):
        async with hold(record.root_execution_id) as held:
            if held:
                sent += await _nudge(runtime, record, now)
    return sent


def _timing_of(runtime: Runtime, record: PauseRecord) -> PauseTiming | None:
    """The timing of the tool's binding, else of the pause's role: an attached graph's
    ``request_approval`` names tools no tool node has, registered only once asked in this
    process, and its questions are nudged after a restart too."""
    if record.route is not None and record.route.timing is not None:
        return record.route.timing  # where a policy routed it (``bot.core.routes``)
    binding = runtime.assembly.binding_of(record.ask.tool, agent=record.agent, role=record.role)
    if binding is not None:
        return binding.timing
    role = runtime.assembly.roles_by_name.get(record.role)
    return None if role is None else role.timing


async def _nudge(runtime: Runtime, record: PauseRecord, now: datetime) -> int:
    """Claim, send and record the nudges due on ``record`` (a reminder and the escalation
    when they fall due at one moment); how many this sweep sent."""
    seen = record.nudge_at
    assert seen is not None
    if record.closes_at is not None and now >= record.closes_at:
        return 0  # past its deadline or expiry: the deadline sweep closes it
    timing = _timing_of(runtime, record)
    retried = record.nudge_claimed_at is not None
    # when the nudges fell due: ``nudge_at`` as read, or as the lapsed claim kept it
    due_at = record.nudge_claimed_at if record.nudge_claimed_at is not None else seen
    escalated = record.escalated_at is not None
    due = (
        ()
        if timing is None
        else timing.due_nudges(record.asked_at, due_at=due_at, now=now, escalated=escalated)
    )
    if timing is None or not due:  # nothing due any more (the timing changed): stop
        await runtime.store.claim_nudge(record.pause_id, seen=seen, until=None, at=now)
        return 0
    claim = now + NUDGE_CLAIM
    if not await runtime.store.claim_nudge(record.pause_id, seen=seen, until=claim, at=due_at):
        return 0  # another instance claimed it
    if retried:
        log.warning(
            "nudge.retried: %s of execution %s due at %s was claimed and never recorded; "
            "sent again",
            " and ".join(nudge.value for nudge in due),
            record.execution_id,
            due_at,
        )
    reminders, escalated_at = await _send(runtime, record, timing, due, now, retried=retried)
    next_at = timing.next_nudge_at(record.asked_at, after=now, escalated=escalated_at is not None)
    await runtime.store.record_nudge(
        record.pause_id,
        claimed=claim,
        reminders_sent=reminders,
        escalated_at=escalated_at,
        next_at=next_at,
    )
    return len(due)


async def _send(
    runtime: Runtime,
    record: PauseRecord,
    timing: PauseTiming,
    due: tuple[Nudge, ...],
    now: datetime,
    *,
    retried: bool,
) -> tuple[int, datetime | None]:
    """Tell the channel each nudge of ``due`` in turn; the reminders sent and when the question
    was escalated, as they then are (a reminder after the escalation says so)."""
    reminders, escalated_at = record.reminders_sent, record.escalated_at
    for nudge in due:
        match nudge:
            case Nudge.REMIND:
                escalated = escalated_at is not None
                await _remind(runtime, record, timing, escalated=escalated, retried=retried)
                reminders += 1
            case Nudge.ESCALATE:
                await _escalate(runtime, record, timing, retried=retried)
                escalated_at = now
            case _:
                assert_never(nudge)
        runtime.metrics.nudged(nudge.value)
    return reminders, escalated_at


async def _remind(
    runtime: Runtime, record: PauseRecord, timing: PauseTiming, *, escalated: bool, retried: bool
) -> None:
    reminder = ChannelReminder(
        nudge_key=f"reminder-{record.reminders_sent + 1}",
        retried=retried,
        pause_id=record.pause_id,
        value=record.ask,
        role=record.role,
        reminded=record.reminders_sent,
        escalated=escalated,
        asked_at=record.asked_at,
        expires_at=timing.expires_at(record.asked_at),
        tenant_id=record.tenant_id,
        owner_id=record.owner_id,
        agent=record.agent,
        thread_id=record.thread_id,
        execution_id=record.execution_id,
        route=record.route,
    )
    await tell_channel(runtime, record, "remind", lambda channel: channel.remind(reminder))


async def _escalate(
    runtime: Runtime, record: PauseRecord, timing: PauseTiming, *, retried: bool
) -> None:
    escalation = ChannelEscalation(
        nudge_key="escalation",
        retried=retried,
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
        route=record.route,
    )
    await tell_channel(runtime, record, "escalate", lambda channel: channel.escalate(escalation))
