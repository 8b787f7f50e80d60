"""A LangChain agent with HumanInTheLoopMiddleware, attached to the Slack office and answered by
signed Slack clicks: the question posted in its role's conversation, Approve runs the tool once,
the reject modal's reason reaches the model, the edit modal's arguments reach the tool."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot import ExecutionStatus, PauseStatus
from bot.core.field_errors import NOT_FINITE
from bot.langgraph import LangGraphAgent
from bot.runtime.decisions import REASON_REQUIRED
from bot.testing.llm import ScriptedChatModel
from channels.slack.flows import not_offered
from channels.slack.render import APPROVE_ACTION, EDIT_ACTION, REJECT_ACTION, RESPOND_ACTION
from channels.slack.render_modal import RESPONSE_ACTION, RESPONSE_BLOCK
from tests.langgraph.kit import Refunds, contents_of_tool_messages, refund_agent, tool_calls
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import APPROVALS, MANAGER, OWNER, RefundApprovalChannel
from tests.slack.stub import TEAM
from tests.slack.test_messages import FIRST_POST
from tests.slack.test_modals import open_modal, reason

ASK = {"messages": [{"role": "user", "content": "refund order 7"}]}


def edits(order_id: str, amount: str) -> dict[str, Any]:
    return {
        "order_id": {"value": {"type": "plain_text_input", "value": order_id}},
        "amount": {"value": {"type": "number_input", "value": amount}},
    }


async def attach_and_ask(
    world: SlackWorld,
    refunds: Refunds,
    model: ScriptedChatModel,
    *,
    allowed: Sequence[str] = ("approve", "edit", "reject"),
) -> tuple[LangGraphAgent, str]:
    """The refund agent attached to the office's Slack refund role, invoked until it asks;
    returns it and the pause id (from the posted button)."""
    graph = refund_agent(model, refunds, allowed=allowed)
    agent = world.app.langgraph("refund-agent", graph, role=RefundApprovalChannel)
    result = await agent.ainvoke(ASK, thread_id="t-7", tenant_id=TEAM, owner_id=OWNER)
    assert result.status is ExecutionStatus.PAUSED
    posted = world.stub.of("chat.postMessage")[-1]
    return agent, str(buttons(posted.blocks())[0]["value"])


def one_refund() -> ScriptedChatModel:
    return ScriptedChatModel(component="refund").then_return(
        tool_calls(("refund", {"order_id": "7", "amount": 40})), "Done."
    )


async def test_an_approve_click_runs_the_tool_once_and_updates_the_message(
    world: SlackWorld,
) -> None:
    refunds, model = Refunds(), one_refund()
    _, pause_id = await attach_and_ask(world, refunds, model)

    [posted] = world.stub.of("chat.postMessage")
    assert posted.payload["channel"] == APPROVALS
    shown = all_text(posted.blocks())
    assert "Refund an order's card payment" in shown  # the tool's own description
    assert "Refund?" in shown  # the middleware's description
    assert "*Order ID*\n7" in shown and "*Amount*\n40" in shown
    assert [b["action_id"] for b in buttons(posted.blocks())] == [
        APPROVE_ACTION,
        REJECT_ACTION,
        EDIT_ACTION,
    ]

    response = await world.click(MANAGER, APPROVE_ACTION, pause_id)
    assert response.status == 200
    await world.settle()
    again = await world.click(MANAGER, APPROVE_ACTION, pause_id)  # a second click: no second run
    assert again.status == 200
    await world.settle()

    assert refunds.runs == [{"order_id": "7", "amount": 40}]
    assert contents_of_tool_messages(model) == ["refunded 40.00 on order 7"]
    update = world.stub.of("chat.update")[0]
    assert f"*Approved* by <@{MANAGER}>" in all_text(update.blocks())
    assert buttons(update.blocks()) == []
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.TAKEN
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_reject_through_the_modal_gives_the_model_the_reason(world: SlackWorld) -> None:
    refunds, model = Refunds(), one_refund()
    _, pause_id = await attach_and_ask(world, refunds, model)
    view = await open_modal(world, REJECT_ACTION, pause_id)

    response = await world.submit(MANAGER, view, reason("amount too high"))
    assert response.status == 200
    await world.settle()

    assert refunds.runs == []
    [said] = contents_of_tool_messages(model)
    assert "amount too high" in said
    [update] = world.stub.of("chat.update")
    assert f"*Rejected* by <@{MANAGER}>" in all_text(update.blocks())
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_edit_through_the_modal_runs_the_tool_with_the_edited_arguments(
    world: SlackWorld,
) -> None:
    refunds, model = Refunds(), one_refund()
    _, pause_id = await attach_and_ask(world, refunds, model)
    view = await open_modal(world, EDIT_ACTION, pause_id)
    assert {block.get("block_id") for block in view["blocks"]} >= {"order_id", "amount"}

    invalid = await world.submit(MANAGER, view, edits("7", "lots"))
    assert invalid.status == 200
    assert "amount" in json.loads(await invalid.text())["errors"]  # the modal stays open
    response = await world.submit(MANAGER, view, edits("7", "25"))
    assert response.status == 200
    assert await response.text() == ""
    await world.settle()

    assert refunds.runs == [{"order_id": "7", "amount": 25.0}]
    [said] = contents_of_tool_messages(model)
    assert said.endswith("refunded 25.00 on order 7")  # after the middleware's note on the edit
    [update] = world.stub.of("chat.update")
    assert "with edited arguments" in all_text(update.blocks())
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_answer_the_middleware_does_not_allow_is_never_offered(
    world: SlackWorld,
) -> None:
    refunds, model = Refunds(), one_refund()
    _, pause_id = await attach_and_ask(world, refunds, model, allowed=("approve", "reject"))
    [posted] = world.stub.of("chat.postMessage")
    assert [b["action_id"] for b in buttons(posted.blocks())] == [APPROVE_ACTION, REJECT_ACTION]

    forged = await world.click(MANAGER, EDIT_ACTION, pause_id)  # a click the message never had
    assert forged.status == 200
    await world.settle()

    assert world.stub.of("views.open") == []
    [told] = world.stub.of("chat.postEphemeral")
    assert (told.payload["user"], told.payload["text"]) == (MANAGER, not_offered("edit"))
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert refunds.runs == []


async def test_a_thread_reply_is_read_by_the_roles_interpreter(world: SlackWorld) -> None:
    refunds, model = Refunds(), one_refund()
    _, pause_id = await attach_and_ask(world, refunds, model)

    await world.message(MANAGER, "reject: wrong customer", thread_ts=FIRST_POST)
    await world.settle()

    assert refunds.runs == []
    [said] = contents_of_tool_messages(model)
    assert "wrong customer" in said
    assert "*Rejected*" in all_text(world.stub.of("chat.update")[0].blocks())
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_answer_instead_of_the_tool_through_its_modal(world: SlackWorld) -> None:
    refunds, model = Refunds(), one_refund()
    allowed = ("approve", "reject", "respond")
    _, pause_id = await attach_and_ask(world, refunds, model, allowed=allowed)
    [posted] = world.stub.of("chat.postMessage")
    assert [b["action_id"] for b in buttons(posted.blocks())] == [
        APPROVE_ACTION,
        REJECT_ACTION,
        RESPOND_ACTION,
    ]
    view = await open_modal(world, RESPOND_ACTION, pause_id)
    answer = "Order 7 was refunded yesterday."

    typed = {RESPONSE_BLOCK: {RESPONSE_ACTION: {"type": "plain_text_input", "value": answer}}}
    response = await world.submit(MANAGER, view, typed)
    assert response.status == 200
    assert await response.text() == ""
    await world.settle()

    assert refunds.runs == []
    assert contents_of_tool_messages(model) == [answer]
    [update] = world.stub.of("chat.update")
    shown = all_text(update.blocks())
    assert f"*Answered instead of the tool* by <@{MANAGER}>" in shown and answer in shown
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_edit_to_a_number_that_is_no_number_keeps_the_modal_open(
    world: SlackWorld,
) -> None:
    refunds, model = Refunds(), one_refund()
    _, pause_id = await attach_and_ask(world, refunds, model)
    view = await open_modal(world, EDIT_ACTION, pause_id)

    for typed in ("1e400", "inf", "nan"):
        response = await world.submit(MANAGER, view, edits("7", typed))
        answer = json.loads(await response.text())
        assert answer == {"response_action": "errors", "errors": {"amount": NOT_FINITE}}
    await world.settle()

    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert refunds.runs == [] and world.stub.of("chat.update") == []


async def test_a_reject_without_the_reason_its_role_requires_keeps_the_modal_open(
    world: SlackWorld,
) -> None:
    refunds, model = Refunds(), one_refund()
    _, pause_id = await attach_and_ask(world, refunds, model)
    view = await open_modal(world, REJECT_ACTION, pause_id)

    response = await world.submit(MANAGER, view, reason(None))

    answer = json.loads(await response.text())
    assert answer == {"response_action": "errors", "errors": {"reason": REASON_REQUIRED}}
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert len(model.calls) == 1  # the model was not told of a rejection
