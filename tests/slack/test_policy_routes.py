"""A policy's route on Slack (issue 28): a big refund is asked in the conversation the policy
routed it to, and only the approvers it named may answer — a signed click of the channel's
own manager is refused, the boss's approves (the tool runs once)."""

from __future__ import annotations

from bot import ExecutionStatus, PauseStatus
from bot.testing import call_tool
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import APPROVALS, BOSS, BOSS_ROOM, MANAGER, RoutedRefundCardTool
from tests.slack.test_lists import approve_values, pending_of


async def test_a_routed_refund_is_asked_in_the_routed_conversation_of_the_routed_approvers(
    world: SlackWorld,
) -> None:
    await world.event({"type": "app_home_opened", "user": BOSS, "tab": "home"})
    await world.settle()
    world.llm.then_return(
        call_tool(RoutedRefundCardTool, {"order_id": "7", "amount": 700}), "refunded"
    )
    result = await world.execute("refund order 7")
    await world.settle()
    home = world.stub.of("views.publish")[-1]  # the boss's Home follows: the question is there
    assert home.payload["user_id"] == BOSS
    assert len(approve_values(home.view()["blocks"])) == 1
    assert result.status is ExecutionStatus.PAUSED
    [question] = world.stub.of("chat.postMessage")
    assert question.payload["channel"] == BOSS_ROOM  # not the channel's APPROVALS
    pause_id = str(buttons(question.blocks())[0]["value"])
    # listed in the boss's /pending, not in the channel's manager's
    assert approve_values((await pending_of(world, BOSS))["blocks"]) == [pause_id]
    assert approve_values((await pending_of(world, MANAGER))["blocks"]) == []

    # the channel's own manager: refused, nothing answered
    response = await world.click(MANAGER, APPROVE_ACTION, pause_id, channel=BOSS_ROOM)
    assert response.status == 200
    await world.settle()
    told = [c.payload["text"] for c in world.stub.of("chat.postEphemeral")]
    assert told == ["You are not one of the approvers of this request."]
    pause = await world.app.find_pause(pause_id, tenant_id=world.tenant)
    assert pause is not None and pause.status is PauseStatus.PENDING

    # the boss the policy named: approved, the tool runs once
    response = await world.click(BOSS, APPROVE_ACTION, pause_id, channel=BOSS_ROOM)
    assert response.status == 200
    await world.settle()
    assert [run for run, _ in world.ledger.runs] == ["routed-refund"]
    pause = await world.app.find_pause(pause_id, tenant_id=world.tenant)
    assert pause is not None and pause.responder == BOSS
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_small_refund_is_asked_as_its_channel_asks(world: SlackWorld) -> None:
    world.llm.then_return(call_tool(RoutedRefundCardTool, {"order_id": "7", "amount": 70}))
    result = await world.execute("refund order 7")
    assert result.status is ExecutionStatus.PAUSED
    [question] = world.stub.of("chat.postMessage")
    assert question.payload["channel"] == APPROVALS
