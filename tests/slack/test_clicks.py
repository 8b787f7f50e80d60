"""Approval messages and clicks: post once, who may click, approve, double clicks, outcomes."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest

from bot import (
    ChannelAsk,
    ChannelOutcome,
    ChannelWithdrawal,
    ExecutionContext,
    ExecutionStatus,
    PauseResolution,
    PauseStatus,
    PauseView,
    Tenant,
)
from bot.store.closings import Withdrawn
from bot.testing import call_tool, inspect_app
from channels.slack.render import APPROVE_ACTION, EDIT_ACTION, REJECT_ACTION
from channels.slack.render_message import REPLY_HINT
from channels.slack.threads import SlackThread
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import (
    ACCOUNTANT,
    APPROVALS,
    FINANCE,
    MANAGER,
    OWNER,
    SECRET_EMAIL,
    STRANGER,
    BookExpenseTool,
    RefundCardTool,
    SlackRefundChannel,
)
from tests.slack.stub import TEAM, SlackStub


async def ask_refund(
    world: SlackWorld, amount: float = 30.0, *, final: str | None = "refund done"
) -> str:
    """Run the office until it asks for a refund; returns the pause id (from the button).

    ``final`` is what the agent says once the refund is answered (``None``: script it later).
    """
    world.llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": amount}))
    if final is not None:
        world.llm.then_return(final)
    result = await world.execute("refund order 7")
    assert result.status is ExecutionStatus.PAUSED
    posted = world.stub.of("chat.postMessage")[-1]
    return str(buttons(posted.blocks())[0]["value"])


async def test_the_approval_message_is_posted_with_its_buttons_and_its_reference_stored(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)

    [posted] = world.stub.of("chat.postMessage")
    assert posted.payload["channel"] == APPROVALS
    assert "thread_ts" not in posted.payload
    blocks = posted.blocks()
    assert [b["action_id"] for b in buttons(blocks)] == [APPROVE_ACTION, REJECT_ACTION, EDIT_ACTION]
    assert {b["value"] for b in buttons(blocks)} == {pause_id}
    shown = all_text(blocks)
    assert "Refunds a card" in shown and "*Order ID*\n7" in shown and "*Amount*\n30.00" in shown
    assert "A manager approves card refunds" in shown and "refund-card-tool" not in shown
    assert REPLY_HINT in shown  # the role reads thread replies
    assert SECRET_EMAIL not in posted.payload.__repr__()  # the sensitive field is masked
    assert f"<@{OWNER}>" in shown
    assert pause_id not in posted.payload["text"]
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None
    assert (ref.channel_id, ref.tenant_id, ref.closed) == (APPROVALS, TEAM, False)
    assert_sent_valid(world.stub.calls, {pause_id})


def channel_of(pause: PauseView) -> tuple[ChannelAsk, ExecutionContext]:
    """What the runtime gives the Slack channel for ``pause``: its ask and its frame."""
    ask = ChannelAsk(
        pause_id=pause.pause_id,
        value=pause.ask,
        role=pause.role,
        owner_id=pause.owner_id,
        tenant_id=TEAM,
        agent=pause.agent,
        thread_id=pause.thread_id,
        execution_id=pause.execution_id,
    )
    context = ExecutionContext(
        tenant=Tenant(tenant_id=TEAM),
        owner_id=pause.owner_id,
        execution_id=pause.execution_id,
        root_execution_id=pause.execution_id,
        thread_id=pause.thread_id,
    )
    return ask, context


async def test_a_retried_send_does_not_post_twice(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None
    ask, context = channel_of(pause)

    outcome = await SlackRefundChannel(world.bot.gateway, context).send(ask)

    assert outcome == ChannelOutcome.await_reply()
    assert len(world.stub.of("chat.postMessage")) == 1


async def test_a_withdrawn_question_says_it_is_no_longer_needed(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None
    ask, context = channel_of(pause)
    # as a parallel launch does when a sibling failed: close the pause, then withdraw it
    await inspect_app(world.app).store.close(
        pause_id, Withdrawn(), at=world.clock.now(), tenant_id=TEAM
    )

    await SlackRefundChannel(world.bot.gateway, context).withdraw(
        ChannelWithdrawal(
            pause_id=pause_id, value=ask.value, resolution=PauseResolution.WITHDRAWN, role=ask.role
        )
    )

    [update] = world.stub.of("chat.update")
    assert "*No longer needed*" in all_text(update.blocks())
    assert buttons(update.blocks()) == []
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.closed


async def test_an_approver_click_acks_at_once_then_resumes_and_updates(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    started = time.perf_counter()
    response = await world.click(MANAGER, APPROVE_ACTION, pause_id)
    acked = time.perf_counter() - started
    assert response.status == 200
    assert acked < 1.0
    await world.settle()

    assert world.ledger.runs == [
        ("refund", {"order_id": "7", "amount": 30.0, "email": SECRET_EMAIL})
    ]
    [update] = world.stub.of("chat.update")
    assert (update.payload["channel"], update.payload["ts"]) == (APPROVALS, "1700000000.000001")
    assert buttons(update.blocks()) == []
    assert f"Approved* by <@{MANAGER}>" in all_text(update.blocks())
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.closed
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.TAKEN
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_non_approver_is_refused_and_logged_without_the_pause_id(
    world: SlackWorld, caplog: pytest.LogCaptureFixture
) -> None:
    pause_id = await ask_refund(world)
    caplog.set_level(logging.DEBUG)

    response = await world.click(STRANGER, APPROVE_ACTION, pause_id)
    await world.settle()

    assert response.status == 200
    [refusal] = world.stub.of("chat.postEphemeral")
    assert refusal.payload["user"] == STRANGER
    assert "not one of the approvers" in refusal.payload["text"]
    assert world.stub.of("chat.update") == []
    assert world.ledger.runs == []
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "refused" in r.msg]
    assert warnings
    assert STRANGER in warnings[0].getMessage() and TEAM in warnings[0].getMessage()
    assert all(pause_id not in record.getMessage() for record in caplog.records)


async def test_a_member_of_an_approver_user_group_may_click(world: SlackWorld) -> None:
    world.stub.groups[FINANCE] = [ACCOUNTANT]
    pause_id = await ask_refund(world)

    await world.click(ACCOUNTANT, APPROVE_ACTION, pause_id)
    await world.settle()

    assert len(world.ledger.runs) == 1
    assert [c.payload["usergroup"] for c in world.stub.of("usergroups.users.list")] == [FINANCE]


async def test_user_groups_are_cached_until_their_ttl_passes(world: SlackWorld) -> None:
    from datetime import timedelta

    world.stub.groups[FINANCE] = []
    first = await ask_refund(world)
    await world.click(ACCOUNTANT, APPROVE_ACTION, first)
    await world.settle()
    await world.click(ACCOUNTANT, APPROVE_ACTION, first)
    await world.settle()
    assert len(world.stub.of("usergroups.users.list")) == 1  # cached

    world.stub.groups[FINANCE] = [ACCOUNTANT]
    await world.clock.advance(timedelta(minutes=6))
    await world.click(ACCOUNTANT, APPROVE_ACTION, first)
    await world.settle()

    assert len(world.stub.of("usergroups.users.list")) == 2
    assert len(world.ledger.runs) == 1


async def ask_expense(world: SlackWorld, thread: SlackThread | None) -> str:
    world.llm.then_return(
        call_tool(BookExpenseTool, {"purpose": "taxi", "amount": 12.0}), "expense done"
    )
    result = await world.execute("book a taxi", owner=OWNER, thread=thread)
    assert result.status is ExecutionStatus.PAUSED
    return str(buttons(world.stub.of("chat.postMessage")[-1].blocks())[0]["value"])


async def test_a_thread_owner_question_is_posted_in_the_owners_slack_thread(
    world: SlackWorld,
) -> None:
    thread = SlackThread(team=TEAM, channel="C0GENERAL", ts="1699999999.000100")
    await ask_expense(world, thread)

    [posted] = world.stub.of("chat.postMessage")
    assert (posted.payload["channel"], posted.payload["thread_ts"]) == (
        "C0GENERAL",
        "1699999999.000100",
    )


async def test_a_thread_owner_question_outside_slack_goes_to_the_conversation(
    world: SlackWorld,
) -> None:
    await ask_expense(world, None)

    [posted] = world.stub.of("chat.postMessage")
    assert posted.payload["channel"] == APPROVALS
    assert "thread_ts" not in posted.payload


async def test_the_thread_owner_may_click_and_nobody_else(world: SlackWorld) -> None:
    pause_id = await ask_expense(world, None)

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    assert "Only the person who asked" in world.stub.of("chat.postEphemeral")[0].payload["text"]
    assert world.ledger.runs == []

    await world.click(OWNER, APPROVE_ACTION, pause_id)
    await world.settle()
    assert world.ledger.runs == [("expense", {"purpose": "taxi", "amount": 12.0})]
    assert f"Approved* by <@{OWNER}>" in all_text(world.stub.of("chat.update")[0].blocks())


async def test_a_second_click_is_told_who_answered(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()

    [told] = world.stub.of("chat.postEphemeral")
    assert told.payload["text"] == f"This request was already answered by <@{MANAGER}>."
    assert len(world.ledger.runs) == 1
    assert len(world.stub.of("chat.update")) == 1


async def test_a_double_click_resumes_once(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    first, second = await asyncio.gather(
        world.click(MANAGER, APPROVE_ACTION, pause_id),
        world.click(MANAGER, APPROVE_ACTION, pause_id),
    )
    await world.settle()

    assert (first.status, second.status) == (200, 200)
    assert len(world.ledger.runs) == 1
    assert len(world.stub.of("chat.update")) == 1
    assert "already answered" in world.stub.of("chat.postEphemeral")[0].payload["text"]


async def test_an_unknown_pause_is_no_longer_available(world: SlackWorld) -> None:
    await world.click(MANAGER, APPROVE_ACTION, "0" * 32)
    await world.settle()

    [told] = world.stub.of("chat.postEphemeral")
    assert told.payload["text"] == "This request is no longer available."


async def test_a_cancelled_question_is_updated_and_then_no_longer_needed(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None

    await world.app.cancel(pause.thread_id, tenant_id=TEAM)
    [update] = world.stub.of("chat.update")
    assert buttons(update.blocks()) == []
    assert "*Cancelled*" in all_text(update.blocks())
    assert update.payload["text"].endswith("cancelled")

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    assert world.stub.of("chat.postEphemeral")[0].payload["text"] == (
        "This request is no longer needed."
    )
    assert world.ledger.runs == []
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_answer_given_through_the_api_updates_the_message(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    await world.app.resume(
        pause_id, decision={"approved": False, "reason": "no"}, tenant_id=TEAM, answered_by="api"
    )
    await world.settle()

    [update] = world.stub.of("chat.update")
    assert "*Rejected* by api" in all_text(update.blocks())


async def test_on_an_in_memory_app_too(memory_world: SlackWorld) -> None:
    world = memory_world
    first = await ask_refund(world, final=None)
    second = await ask_refund(world, final=None)
    world.llm.then_return("one done", "two done")

    await asyncio.gather(
        world.click(MANAGER, APPROVE_ACTION, first),
        world.click(MANAGER, APPROVE_ACTION, second),
        world.click(MANAGER, APPROVE_ACTION, first),
    )
    await world.settle()

    assert len(world.ledger.runs) == 2
    assert len(world.stub.of("chat.update")) == 2
    assert len(world.stub.of("chat.postEphemeral")) == 1


async def test_a_fixed_tenant_is_used_for_every_workspace(stub: SlackStub, tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'tenant.db'}"
    async with open_world(stub, url, tenant="acme") as world:
        pause_id = await ask_refund(world)
        assert await world.app.find_pause(pause_id, tenant_id="acme") is not None

        await world.click(MANAGER, APPROVE_ACTION, pause_id)
        await world.settle()

        assert len(world.ledger.runs) == 1


async def test_seen_events_are_pruned_after_an_hour(world: SlackWorld) -> None:
    from datetime import timedelta

    ignored = {"type": "message", "user": MANAGER, "text": "x", "channel": APPROVALS, "ts": "1.1"}
    await world.event(ignored, event_id="Ev0OLD")
    seen = world.bot.seen_events
    assert not await seen.first_time("Ev0OLD", world.clock.now())

    await world.clock.advance(timedelta(hours=2))

    assert await seen.first_time("Ev0OLD", world.clock.now())
