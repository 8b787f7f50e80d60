"""Time on a web question, on a FakeClock: reminders and the escalation reach the notifier, each
the right number of times with the right content; an escalation approver may answer only once
it is escalated; the pages and the inbox show the time left, the reminders and the escalation;
a notifier that fails loses nothing."""

from __future__ import annotations

import logging
from datetime import timedelta
from urllib.parse import urlsplit

import pytest

from bot import ExecutionStatus, PauseStatus
from bot.core.channel import ChannelAsk
from bot.core.dtos import ToolCallApprovalAsk
from bot.core.errors import SetupError
from bot.testing import call_tool
from channels.kit.texts import NOT_ESCALATED_YET
from channels.web import WebNotice, web_channel
from channels.web.notify import NoticeKind
from tests.web.conftest import WebWorld
from tests.web.office import (
    ALICE,
    BOB,
    CAROL,
    HOUR,
    TENANT,
    ExpenseApprovalChannel,
    HourlyPayOutTool,
    PayoutApprovalChannel,
    PayOutTool,
    RefundCardTool,
)
from tests.web.pages import answer, csrf_of, forged_csrf, has_forms, open_page, post

PAYOUT = "pay-out-tool"
HOURLY = "pay-out-hourly-tool"
SWEPT = timedelta(seconds=5)
"""The sweep ticks every 3 s from the App's start: whole hours from ``SWEPT`` after the
question end just after a tick that came at or after the hour."""


async def ask_payout(world: WebWorld) -> str:
    """Ask for one payout (it expires in 24 h); its pause id, kept server-side."""
    result = await world.ask(call_tool(PayOutTool, {"payee": "Dana", "amount": 300}), "paid")
    assert result.status is ExecutionStatus.PAUSED
    pending = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
    [pause_id] = [p.pause_id for p in pending if p.ask.tool == PAYOUT]
    assert pause_id is not None
    return pause_id


async def hours(world: WebWorld, count: int) -> None:
    for _ in range(count):
        await world.clock.advance(HOUR)


def told(world: WebWorld, kind: NoticeKind) -> list[WebNotice]:
    return [n for n in world.notices if n.kind is kind and n.tool == PAYOUT]


def path_of(url: str) -> str:
    return urlsplit(url).path


async def test_reminders_and_the_escalation_reach_the_notifier(web_world: WebWorld) -> None:
    pause_id = await ask_payout(web_world)
    expires_at = web_world.clock.now() + 24 * HOUR
    [question] = web_world.notices
    assert (question.kind, question.approver) == (NoticeKind.QUESTION, BOB)
    assert question.expires_at == expires_at and question.approvers == (BOB,)
    await web_world.clock.advance(SWEPT)

    await hours(web_world, 1)
    [first] = told(web_world, NoticeKind.REMINDER)
    assert (first.approver, first.reminder, first.approvers) == (BOB, 1, (BOB,))
    assert first.expires_at == expires_at
    assert first.subject == "Reminder 1: approval still needed: Pays a payee out"
    assert "Expires 2026-01-02 09:00 UTC if nobody answers." in first.text
    assert first.url in first.text and first.url != question.url  # a fresh link
    status, page = await open_page(web_world.http, path_of(first.url))
    assert status == 200 and has_forms(page)

    await hours(web_world, 2)  # 3 h
    assert [n.reminder for n in told(web_world, NoticeKind.REMINDER)] == [1, 2]
    assert told(web_world, NoticeKind.ESCALATION) == []

    await hours(web_world, 1)  # 4 h: escalated, not reminded
    [escalation] = told(web_world, NoticeKind.ESCALATION)
    assert (escalation.approver, escalation.approvers) == (CAROL, (BOB,))
    assert escalation.expires_at == expires_at
    assert escalation.subject == "Escalated to you: approval needed: Pays a payee out"
    assert f"asked of {BOB} first" in escalation.text
    assert len(told(web_world, NoticeKind.REMINDER)) == 2

    await hours(web_world, 1)  # 5 h: escalated, so Carol may answer: she is reminded too
    reminders = told(web_world, NoticeKind.REMINDER)
    assert [(n.approver, n.reminder) for n in reminders] == [
        (BOB, 1),
        (BOB, 2),
        (BOB, 3),
        (CAROL, 3),
    ]
    assert reminders[-1].approvers == (BOB, CAROL)

    await hours(web_world, 20)  # 25 h: reminded at 7, 9, ..., 23 h; expired at 24 h
    numbers = [n.reminder for n in told(web_world, NoticeKind.REMINDER) if n.approver == BOB]
    assert numbers == list(range(1, 13))
    assert len(told(web_world, NoticeKind.ESCALATION)) == 1
    assert all(pause_id not in n.text and pause_id not in repr(n) for n in web_world.notices)
    status, page = await open_page(web_world.http, path_of(escalation.url))
    assert status == 200
    assert "Expired: nobody answered in time." in page
    assert not has_forms(page)


async def test_a_reminder_due_with_the_escalation_is_sent_and_reaches_the_escalated_too(
    web_world: WebWorld,
) -> None:
    """Reminded every hour, escalated at 3 h: the 3 h reminder is sent (to Bob, before the
    escalation reaches Carol), and every reminder after the escalation reaches Carol too."""
    result = await web_world.ask(call_tool(HourlyPayOutTool, {"payee": "Dana", "amount": 9}))
    assert result.status is ExecutionStatus.PAUSED
    await web_world.clock.advance(SWEPT)

    def nudges() -> list[tuple[NoticeKind, str, int]]:
        return [
            (n.kind, n.approver, n.reminder)
            for n in web_world.notices
            if n.tool == HOURLY and n.kind is not NoticeKind.QUESTION
        ]

    reminder, escalation = NoticeKind.REMINDER, NoticeKind.ESCALATION
    said: list[list[tuple[NoticeKind, str, int]]] = []
    for _ in range(5):
        await hours(web_world, 1)
        said.append(nudges()[sum(len(s) for s in said) :])
    assert said == [
        [(reminder, BOB, 1)],
        [(reminder, BOB, 2)],
        [(reminder, BOB, 3), (escalation, CAROL, 0)],  # the reminder first: it was Bob's
        [(reminder, BOB, 4), (reminder, CAROL, 4)],
        [(reminder, BOB, 5), (reminder, CAROL, 5)],
    ]
    reminders = [n for n in web_world.notices if n.tool == HOURLY and n.kind is reminder]
    assert [n.approvers for n in reminders] == [(BOB,)] * 3 + [(BOB, CAROL)] * 4
    assert reminders[-1].approver == CAROL
    status, page = await open_page(web_world.http, path_of(reminders[-1].url))
    assert status == 200 and has_forms(page)  # her reminder's link answers


async def test_an_escalation_approver_may_answer_only_once_it_is_escalated(
    web_world: WebWorld,
) -> None:
    pause_id = await ask_payout(web_world)
    # a link for Carol before the escalation (the application could make one)
    early = web_world.server.outbox.question_url(pause_id, approver=CAROL, tenant_id=TENANT)
    early_path = path_of(early)

    status, page = await open_page(web_world.http, early_path)
    assert status == 403
    assert NOT_ESCALATED_YET in page and not has_forms(page)
    forged = await post(
        web_world.http,
        early_path,
        "approve",
        forged_csrf(web_world.app, web_world.http, early_path),
    )
    assert forged.status == 403
    assert NOT_ESCALATED_YET in await forged.text()
    pause = await web_world.app.find_pause(pause_id, tenant_id=TENANT)
    assert pause is not None and pause.status is PauseStatus.PENDING

    bob_path = web_world.link(BOB, PAYOUT)  # the question's link (reminders bring fresh ones)
    async with web_world.client() as bob:
        _, bob_page = await open_page(bob, bob_path)  # before the answer
        await web_world.clock.advance(SWEPT)
        await hours(web_world, 4)
        [escalation] = told(web_world, NoticeKind.ESCALATION)

        status, page = await answer(web_world.http, path_of(escalation.url), "approve")
        assert status == 303 and "Approved by you." in page
        late = await post(bob, bob_path, "approve", csrf_of(bob_page))
        assert late.status == 409  # the first answer from either side wins
        assert f"Approved by {CAROL}." in await late.text()
    assert web_world.ledger.runs == [("payout", {"payee": "Dana", "amount": 300.0})]


async def test_the_inbox_shows_time_left_reminders_and_what_expires_first(
    web_world: WebWorld,
) -> None:
    # each run waits on its first call: the model is scripted for that call only
    await web_world.ask(call_tool(PayOutTool, {"payee": "Dana", "amount": 300}))
    await web_world.clock.advance(timedelta(minutes=1))
    await web_world.ask(call_tool(RefundCardTool, {"order_id": "7", "amount": 40}))
    await web_world.clock.advance(SWEPT)
    await hours(web_world, 3)  # reminded at 1 h and 3 h; 20 h 58 min 55 s left

    async with web_world.client() as bob:
        status, inbox = await open_page(
            bob, path_of(web_world.server.inbox_url(BOB, tenant_id=TENANT))
        )
        assert status == 200
        # the payout expires: first, though the refund is newer
        assert inbox.index("Pays a payee out") < inbox.index("Refunds a card")
        assert "20 h 58 min left" in inbox and "reminded 2 times" in inbox
        assert inbox.count(" left<") == 1  # the refund never expires
        status, page = await open_page(bob, path_of(told(web_world, NoticeKind.REMINDER)[-1].url))
        assert status == 200
        assert (
            "Expires 2026-01-02 09:00 UTC (20 h 58 min left) if nobody answers. "
            "Reminded 2 times." in page
        )

    async with web_world.client() as carol:
        carol_inbox = path_of(web_world.server.inbox_url(CAROL, tenant_id=TENANT))
        _, before = await open_page(carol, carol_inbox)
        assert "Nothing waits for you." in before
        await hours(web_world, 1)  # 4 h: escalated
        _, after = await open_page(carol, carol_inbox)
        assert "Pays a payee out" in after and "escalated to you" in after
        assert "Refunds a card" not in after
        [link] = [part.split('"')[0] for part in after.split('href="')[1:] if "/q/" in part]
        status, page = await open_page(carol, path_of(link))
        assert status == 200 and has_forms(page)
        assert "Reminded 2 times and escalated." in page


async def test_a_failing_notifier_loses_neither_the_question_nor_the_others(
    web_world: WebWorld, caplog: pytest.LogCaptureFixture
) -> None:
    web_world.unreachable.add(ALICE)

    with caplog.at_level(logging.WARNING, logger="countersign.web"):
        result = await web_world.ask(
            call_tool(RefundCardTool, {"order_id": "7", "amount": 40}), "done"
        )

    assert result.status is ExecutionStatus.PAUSED
    assert [n.approver for n in web_world.notices] == [BOB]
    assert "web.notify-failed: a question notice for alice@example.com" in caplog.text
    # Alice finds it in her inbox all the same
    _, inbox = await open_page(
        web_world.http, path_of(web_world.server.inbox_url(ALICE, tenant_id=TENANT))
    )
    [link] = [part.split('"')[0] for part in inbox.split('href="')[1:] if "/q/" in part]
    status, page = await answer(web_world.http, path_of(link), "approve")
    assert status == 303 and "Approved by you." in page


async def test_a_channels_own_notifier_is_told_instead_of_the_servers(
    web_world: WebWorld,
) -> None:
    mine: list[WebNotice] = []

    async def page_the_desk(notice: WebNotice) -> None:
        mine.append(notice)

    channel = web_channel(
        PayoutApprovalChannel, name="paged-payouts", approvers=[BOB, ALICE], notify=page_the_desk
    )
    ask = ChannelAsk(
        pause_id="a-pause",
        value=ToolCallApprovalAsk(tool=PAYOUT, arguments={"payee": "Dana"}, call_id="c1"),
        role="payout-approval-channel",
        owner_id="olga",
        tenant_id=TENANT,
    )

    await web_world.server.outbox.post(ask, channel.web)

    assert [(n.approver, n.kind, n.approvers) for n in mine] == [
        (BOB, NoticeKind.QUESTION, (BOB, ALICE)),
        (ALICE, NoticeKind.QUESTION, (BOB, ALICE)),
    ]
    assert web_world.notices == []


def test_escalate_to_is_checked_at_once() -> None:
    with pytest.raises(SetupError, match="escalate_to is a list of names"):
        web_channel(PayoutApprovalChannel, name="x", approvers=[BOB], escalate_to=CAROL)
    with pytest.raises(SetupError, match="escalate_to are user names"):
        web_channel(PayoutApprovalChannel, name="x", approvers=[BOB], escalate_to=["a b"])
    with pytest.raises(SetupError, match="leave escalate_to out"):
        web_channel(ExpenseApprovalChannel, name="x", escalate_to=[CAROL])
    # declared escalation: assembly then requires an escalate_after ([timing.escalation-unused])
    assert web_channel(
        PayoutApprovalChannel, name="x-channel", approvers=[BOB], escalate_to=[CAROL]
    ).escalates
    assert not web_channel(PayoutApprovalChannel, name="y-channel", approvers=[BOB]).escalates
