"""Reminders and escalation of a question still waiting, sent by the sweep through the channel:
each once (also across two instances), never at or after the expiry, none after an answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot import ExecutionStatus, NotPausedError, PauseResolution, PauseTiming, WorkflowStartText
from bot.core.timing import Nudge
from bot.runtime.nudges import NUDGE_CLAIM
from bot.store.leases import LeaseClaim, SqlLeases
from bot.testing import FakeClock, inspect_app, mock_llm, test_with
from tests.conftest import NO_SETTINGS
from tests.databases import BACKENDS, database
from tests.runtime.test_expiry import Desk, Sent, open_desk, payout_application, payout_call

HOUR = timedelta(hours=1)
TIMING = PauseTiming(
    remind_after=HOUR,
    remind_every=2 * HOUR,
    escalate_after=4 * HOUR,
    expire_after=24 * HOUR,
)
ASKED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SWEPT = timedelta(seconds=5)
"""The sweep ticks every 3 s from the App's start: a step of whole hours from ``SWEPT`` after
the question ends just after a tick that came at or after the hour."""


def test_the_schedule_reminds_escalates_and_stops_before_the_expiry() -> None:
    def next_after(hours: float | None, *, escalated: bool) -> datetime | None:
        after = None if hours is None else ASKED + timedelta(hours=hours)
        return TIMING.next_nudge_at(ASKED, after=after, escalated=escalated)

    assert next_after(None, escalated=False) == ASKED + HOUR
    assert next_after(1, escalated=False) == ASKED + 3 * HOUR
    assert next_after(3, escalated=False) == ASKED + 4 * HOUR  # the escalation comes first
    assert next_after(4, escalated=True) == ASKED + 5 * HOUR
    assert next_after(9.5, escalated=True) == ASKED + 11 * HOUR  # missed slots: one reminder
    assert next_after(23, escalated=True) is None  # the next slot (25 h) is after the expiry
    at = ASKED + 4 * HOUR
    assert TIMING.due_nudge(ASKED, now=at, escalated=False) is Nudge.ESCALATE
    assert TIMING.due_nudge(ASKED, now=at, escalated=True) is Nudge.REMIND
    assert TIMING.due_nudge(ASKED, now=ASKED + 24 * HOUR, escalated=True) is None
    assert TIMING.due_nudge(ASKED, now=ASKED, escalated=False) is None


async def _hours(desk: Desk, hours: int) -> None:
    for _ in range(hours):
        await desk.clock.advance(HOUR)


async def test_reminders_at_1_3_5_hours_escalation_at_4_and_expiry_at_24(tmp_path: Any) -> None:
    sample = payout_application("nudged", role_timing=TIMING)
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        pause_id = await desk.ask()
        asked_at = desk.clock.now()
        await desk.clock.advance(SWEPT)

        await _hours(desk, 1)
        assert [r.reminded for r in desk.sent.reminders] == [0]
        assert desk.sent.escalations == []
        await _hours(desk, 2)  # 3 h
        assert [r.reminded for r in desk.sent.reminders] == [0, 1]
        await _hours(desk, 1)  # 4 h
        assert len(desk.sent.reminders) == 2 and len(desk.sent.escalations) == 1
        await _hours(desk, 1)  # 5 h
        assert [r.reminded for r in desk.sent.reminders] == [0, 1, 2]
        await _hours(desk, 20)  # 25 h: reminded at 7, 9, ..., 23 h; expired at 24 h

        assert [r.reminded for r in desk.sent.reminders] == list(range(12))
        assert len(desk.sent.escalations) == 1
        [withdrawal] = desk.sent.withdrawals
        assert withdrawal.resolution is PauseResolution.EXPIRED
        first, escalation = desk.sent.reminders[0], desk.sent.escalations[0]
        assert first.pause_id == escalation.pause_id == pause_id
        assert first.expires_at == escalation.expires_at == asked_at + 24 * HOUR
        assert first.asked_at == asked_at and first.value.tool == desk.sent.asks[0].value.tool
        assert pause_id not in repr(first) and pause_id not in repr(escalation)
        shown = (await desk.app.metrics.exposition()).decode()
        assert 'countersign_nudges_total{kind="remind"} 12.0' in shown
        assert 'countersign_nudges_total{kind="escalate"} 1.0' in shown
        assert 'countersign_withdrawals_total{resolution="EXPIRED"} 1.0' in shown


async def test_an_answer_at_23_hours_stops_the_reminders(tmp_path: Any) -> None:
    sample = payout_application("answered-nudged", role_timing=TIMING)
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        pause_id = await desk.ask()
        await desk.clock.advance(SWEPT)
        await _hours(desk, 22)
        await desk.clock.advance(HOUR / 2)  # 22.5 h: reminded at 1, 3, ..., 21 h
        assert len(desk.sent.reminders) == 11 and len(desk.sent.escalations) == 1

        result = await desk.app.resume(
            pause_id, decision={"approved": True}, tenant_id="t", answered_by="m"
        )
        await _hours(desk, 3)

        assert result.status is ExecutionStatus.COMPLETED
        assert len(desk.sent.reminders) == 11 and len(desk.sent.escalations) == 1
        assert desk.sent.withdrawals == []
        with pytest.raises(NotPausedError):
            await desk.app.resume(
                pause_id, decision={"approved": False}, tenant_id="t", answered_by="n"
            )


async def test_a_role_without_reminders_sends_none(tmp_path: Any) -> None:
    timing = PauseTiming(expire_after=24 * HOUR)
    sample = payout_application("quiet", role_timing=timing)
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        await desk.ask()
        await _hours(desk, 25)
        assert desk.sent.reminders == [] and desk.sent.escalations == []
        assert len(desk.sent.withdrawals) == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_two_instances_send_each_reminder_once(backend: str, tmp_path: Path) -> None:
    sample = payout_application(f"twice-{backend}", role_timing=TIMING)
    llm = mock_llm(sample.agent)
    sent, clock = Sent(), FakeClock()
    async with (
        database(backend, tmp_path) as url,
        test_with(
            sample.application,
            instances=2,
            database_url=url,
            clock=clock,
            settings=NO_SETTINGS,
            services={Sent: sent},
        ) as (one, two),
    ):
        desk = Desk(app=one, clock=clock, sent=sent, sample=sample, llm=llm)
        payout_call(desk)
        await one.execute(
            sample.workflow, WorkflowStartText(text="pay"), tenant_id="t", owner_id="U1"
        )
        await clock.advance(SWEPT)
        for _ in range(6):  # both instances sweep at each step of the one clock
            await clock.advance(HOUR)

        assert [r.reminded for r in sent.reminders] == [0, 1, 2]
        assert len(sent.escalations) == 1
        assert two is not one


async def test_a_reminder_waits_while_another_instance_holds_the_tree(tmp_path: Any) -> None:
    """Nudges are sent under the tree's lease: while another instance holds it (a pass runs
    there), the due reminder waits for the next tick after the lease is given up."""
    sample = payout_application("leased", role_timing=TIMING)
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        pause_id = await desk.ask()
        record = await inspect_app(desk.app).store.find("t", pause_id)
        assert record is not None
        leases = SqlLeases(desk.app.database)
        other = LeaseClaim(record.root_execution_id, "instance-other", desk.clock.now(), 2 * HOUR)
        assert await leases.try_take(other)

        await desk.clock.advance(HOUR + SWEPT)
        assert desk.sent.reminders == []  # due, but the tree is held elsewhere
        await leases.release(other)
        await desk.clock.advance(timedelta(seconds=3))  # the next tick
        [reminder] = desk.sent.reminders
        assert (reminder.reminded, reminder.nudge_key, reminder.retried) == (0, "reminder-1", False)


async def test_a_claim_whose_instance_died_is_sent_after_it_lapses(tmp_path: Any) -> None:
    """An instance claimed the first reminder and died before telling the channel: the claim
    lapses (``NUDGE_CLAIM``) and the sweep sends that reminder then, once."""
    sample = payout_application("crashed-claim", role_timing=TIMING)
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        pause_id = await desk.ask()
        store = inspect_app(desk.app).store
        record = await store.find("t", pause_id)
        assert record is not None and record.nudge_at == record.asked_at + HOUR
        claim = record.nudge_at + NUDGE_CLAIM
        claimed_at = record.nudge_at  # the dead instance's sweep, on time
        assert await store.claim_nudge(pause_id, seen=record.nudge_at, until=claim, at=claimed_at)

        await desk.clock.advance(HOUR + SWEPT)
        assert desk.sent.reminders == []  # claimed by the dead instance
        await desk.clock.advance(NUDGE_CLAIM)

        [resent] = desk.sent.reminders
        assert (resent.reminded, resent.nudge_key, resent.retried) == (0, "reminder-1", True)
        await desk.clock.advance(HOUR)
        assert [r.reminded for r in desk.sent.reminders] == [0]  # the next is at 3 h
        after = await store.find("t", pause_id)
        assert after is not None and after.reminders_sent == 1
        assert after.nudge_at == record.asked_at + 3 * HOUR
        assert after.nudge_claimed_at is None
        await desk.clock.advance(HOUR)
        [_, second] = desk.sent.reminders
        assert (second.reminded, second.nudge_key, second.retried) == (1, "reminder-2", False)


HOURLY = PauseTiming(
    remind_after=HOUR, remind_every=HOUR, escalate_after=3 * HOUR, expire_after=24 * HOUR
)
"""A reminder slot at the escalation's moment (3 h)."""


def test_a_reminder_at_the_escalations_moment_is_due_with_it_and_first() -> None:
    def due(due_at: float, now: float, *, escalated: bool = False) -> tuple[Nudge, ...]:
        return HOURLY.due_nudges(
            ASKED,
            due_at=ASKED + due_at * HOUR,
            now=ASKED + now * HOUR,
            escalated=escalated,
        )

    assert due(2, 2) == (Nudge.REMIND,)
    assert due(3, 3) == (Nudge.REMIND, Nudge.ESCALATE)  # the 3 h reminder is not skipped
    assert HOURLY.next_nudge_at(ASKED, after=ASKED + 3 * HOUR, escalated=True) == ASKED + 4 * HOUR
    assert due(4, 4, escalated=True) == (Nudge.REMIND,)
    assert due(1, 6) == (Nudge.REMIND, Nudge.ESCALATE)  # missed slots: one reminder
    assert due(3.5, 3.6, escalated=True) == ()  # no slot came since it fell due
    assert due(23, 24, escalated=True) == ()  # expired
    assert TIMING.due_nudges(
        ASKED, due_at=ASKED + 4 * HOUR, now=ASKED + 4 * HOUR, escalated=False
    ) == (
        Nudge.ESCALATE,  # reminded at 3 h and 5 h: nothing falls at the escalation's 4 h
    )


async def test_every_hourly_reminder_is_sent_and_those_after_the_escalation_say_so(
    tmp_path: Any,
) -> None:
    sample = payout_application("hourly", role_timing=HOURLY)
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        await desk.ask()
        await desk.clock.advance(SWEPT)
        counts = []
        for _ in range(5):
            await _hours(desk, 1)
            counts.append((len(desk.sent.reminders), len(desk.sent.escalations)))

        assert counts == [(1, 0), (2, 0), (3, 1), (4, 1), (5, 1)]
        reminders = desk.sent.reminders
        assert [r.nudge_key for r in reminders] == [f"reminder-{n}" for n in range(1, 6)]
        assert [r.escalated for r in reminders] == [False, False, False, True, True]


async def test_a_lapsed_claim_of_a_reminder_and_the_escalation_sends_both_again(
    tmp_path: Any,
) -> None:
    """An instance claimed the 3 h reminder and the escalation and died: the claim keeps when
    they fell due, so the sweep after it sends both again (``retried``), not the escalation
    alone."""
    sample = payout_application("hourly-crash", role_timing=HOURLY)
    async with open_desk(sample, tmp_path) as desk:
        payout_call(desk)
        pause_id = await desk.ask()
        await desk.clock.advance(SWEPT)
        await _hours(desk, 2)
        store = inspect_app(desk.app).store
        record = await store.find("t", pause_id)
        assert record is not None and record.nudge_at == record.asked_at + 3 * HOUR
        due = record.nudge_at
        claim = due + NUDGE_CLAIM  # the dead instance's sweep claimed both, on time
        assert await store.claim_nudge(pause_id, seen=due, until=claim, at=due)

        await _hours(desk, 1)  # 3 h: claimed by the dead instance
        assert len(desk.sent.reminders) == 2 and desk.sent.escalations == []
        await desk.clock.advance(NUDGE_CLAIM)

        resent = desk.sent.reminders[-1]
        assert (resent.nudge_key, resent.retried, resent.escalated) == ("reminder-3", True, False)
        [escalation] = desk.sent.escalations
        assert escalation.retried
        after = await store.find("t", pause_id)
        assert after is not None and after.reminders_sent == 3
        assert after.nudge_at == record.asked_at + 4 * HOUR and after.nudge_claimed_at is None
