"""A LangChain agent with HumanInTheLoopMiddleware, attached to the Slack office and answered by
signed Slack clicks: the question posted in its role's conversation, Approve runs the tool once,
the reject modal's reason reaches the model, the edit modal's arguments reach the tool."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest

from bot import ExecutionResumeEvent, ExecutionStatus, PauseExpiredError, PauseStatus
from bot.core.field_errors import NOT_FINITE
from bot.langgraph import LangGraphAgent
from bot.runtime.decisions import REASON_REQUIRED
from bot.testing import inspect_app
from bot.testing.llm import ScriptedChatModel
from channels.kit.offers import Offered, not_offered
from channels.kit.texts import SELF_APPROVAL
from channels.slack.render import APPROVE_ACTION, EDIT_ACTION, REJECT_ACTION, RESPOND_ACTION
from channels.slack.render_modal import RESPONSE_ACTION, RESPONSE_BLOCK
from channels.slack.render_turn import TURN_APPROVE_ALL
from tests.langgraph.kit import (
    Refunds,
    Wires,
    contents_of_tool_messages,
    one_wire,
    refund_agent,
    tool_calls,
    wire_agent,
)
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import (
    ACCOUNTANT,
    APPROVALS,
    FINANCE,
    MANAGER,
    OWNER,
    RefundApprovalChannel,
    WireApprovalChannel,
)
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
    assert "Approved with changes" in all_text(update.blocks())
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
    assert (told.payload["user"], told.payload["text"]) == (
        MANAGER,
        not_offered(Offered(edit=False)),
    )
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


def wire_edits(iban: str, amount: str) -> dict[str, Any]:
    return {
        "iban": {"value": {"type": "plain_text_input", "value": iban}},
        "amount": {"value": {"type": "number_input", "value": amount}},
    }


def label_of(view: dict[str, Any], block_id: str) -> str:
    [block] = [b for b in view["blocks"] if b.get("block_id") == block_id]
    return str(block["label"]["text"])


async def test_a_wire_is_shown_and_its_edit_checked_by_the_roles_model(
    world: SlackWorld,
) -> None:
    """The role approves ``WireInput`` (an account titled "Account (IBAN)", at least 4
    characters); the graph's wire tool takes any account. What the approver is shown, and what
    an edit is checked by, is the role's model — and the tool's own schema checks it too."""
    wires = Wires()
    agent = world.app.langgraph(
        "wire-agent", wire_agent(one_wire(), wires), role=WireApprovalChannel
    )
    result = await agent.ainvoke(ASK, thread_id="t-9", tenant_id=TEAM, owner_id=OWNER)
    assert result.status is ExecutionStatus.PAUSED
    [posted] = world.stub.of("chat.postMessage")
    assert "*Account (IBAN)*\nDE0012345" in all_text(posted.blocks())
    pause_id = str(buttons(posted.blocks())[0]["value"])
    view = await open_modal(world, EDIT_ACTION, pause_id)
    assert label_of(view, "iban") == "Account (IBAN)"

    short = await world.submit(MANAGER, view, wire_edits("DE1", "500"))
    assert short.status == 200
    assert "iban" in json.loads(await short.text())["errors"]  # the modal stays open
    too_much = await world.submit(MANAGER, view, wire_edits("DE0099999", "50000"))
    assert too_much.status == 200  # the role's model takes it, the tool's own schema does not
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert wires.runs == []
    [told] = world.stub.of("chat.postEphemeral")
    assert told.payload["user"] == MANAGER
    assert "the tool wire does not take the edited amount" in told.payload["text"]

    edited = await world.submit(MANAGER, view, wire_edits("DE0099999", "400"))
    assert edited.status == 200 and await edited.text() == ""
    await world.settle()

    assert wires.runs == [{"iban": "DE0099999", "amount": 400.0}]
    done = await world.app.get_result(result.execution_id, tenant_id=TEAM, record=True)
    assert done.status is ExecutionStatus.COMPLETED and done.record is not None
    [entry] = done.record.pauses
    assert entry.ran_with == {"iban": "DE0099999", "amount": 400.0}
    assert_sent_valid(world.stub.calls, {pause_id})


@pytest.mark.parametrize("name", ["refund", "refund-card-tool"])
async def test_a_tool_named_like_another_graphs_or_ours_keeps_its_own_role(
    world: SlackWorld, name: str
) -> None:
    """The wire role separates duties; another graph's tool (``refund``) and one of ours
    (``refund-card-tool``) have the wire tool's name under the refund role, which does not: the
    wire's question is still asked, and answered, under the wire role."""
    world.stub.groups[FINANCE] = [ACCOUNTANT]
    wires = Wires()
    graph = wire_agent(one_wire(name=name), wires, name=name)
    agent = world.app.langgraph("wire-agent", graph, role=WireApprovalChannel)
    world.app.langgraph(
        "refund-agent", refund_agent(one_refund(), Refunds()), role=RefundApprovalChannel
    )
    result = await agent.ainvoke(ASK, thread_id="t-9", tenant_id=TEAM, owner_id=MANAGER)
    assert result.status is ExecutionStatus.PAUSED
    [pending] = result.pending
    assert pending.channel == "wire-approval-channel"
    [posted] = world.stub.of("chat.postMessage")
    assert f"<@{MANAGER}> asked for this and cannot approve it" in all_text(posted.blocks())
    pause_id = str(buttons(posted.blocks())[0]["value"])

    await world.click(MANAGER, APPROVE_ACTION, pause_id)  # the requester: refused
    await world.settle()

    [told] = world.stub.of("chat.postEphemeral")
    assert (told.payload["user"], told.payload["text"]) == (MANAGER, SELF_APPROVAL)
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert wires.runs == []

    await world.click(ACCOUNTANT, APPROVE_ACTION, pause_id)
    await world.settle()
    assert wires.runs == [{"iban": "DE0012345", "amount": 500.0}]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_one_call_of_a_turn_approved_updates_its_message_and_tells_the_rest(
    world: SlackWorld,
) -> None:
    """The model asks for three refunds in one turn (one batched interrupt): one message lists
    the three, each with its own buttons (issue 29, item 3); approving the first by its button
    updates the message at once (its outcome, the others still with buttons) and tells that the
    run rests on the others (``on_execution_pause``), as for our own agents' calls; "Approve
    all" answers the other two, and the graph moves once, each refund run once."""
    rests: list[list[str]] = []
    world.app.on_execution_pause(
        lambda event: rests.append([p.ask.arguments["order_id"] for p in event.pending])
    )
    refunds = Refunds()
    model = ScriptedChatModel(component="refund").then_return(
        tool_calls(
            ("refund", {"order_id": "7", "amount": 40}),
            ("refund", {"order_id": "8", "amount": 5}),
            ("refund", {"order_id": "9", "amount": 6}),
        ),
        "Done.",
    )
    graph = refund_agent(model, refunds)
    agent = world.app.langgraph("refund-agent", graph, role=RefundApprovalChannel)
    await agent.ainvoke(ASK, thread_id="t-7", tenant_id=TEAM, owner_id=OWNER)
    [posted] = world.stub.posted  # one message for the turn
    assert rests == [["7", "8", "9"]]
    listed = world.stub.of("chat.update")[-1].blocks()
    ids = [str(b["value"]) for b in buttons(listed) if b["action_id"].startswith(APPROVE_ACTION)]
    assert len(set(ids)) == 3
    assert "Approval needed: 3 requests" in all_text(listed)

    await world.click(MANAGER, APPROVE_ACTION, ids[0], message_ts=posted["ts"])
    await world.settle()

    update = world.stub.of("chat.update")[-1]
    assert update.payload["ts"] == posted["ts"]
    assert f"*Approved* by <@{MANAGER}>" in all_text(update.blocks())
    still = [b for b in buttons(update.blocks()) if b["action_id"].startswith(APPROVE_ACTION)]
    assert [b["value"] for b in still] == ids[1:]
    assert rests == [["7", "8", "9"], ["8", "9"]]
    assert refunds.runs == [] and len(model.calls) == 1  # the graph waits for the others

    [approve_all] = [b for b in buttons(update.blocks()) if b["action_id"] == TURN_APPROVE_ALL]
    await world.click(MANAGER, TURN_APPROVE_ALL, str(approve_all["value"]), message_ts=posted["ts"])
    await world.settle()

    assert refunds.by_order == [
        {"order_id": "7", "amount": 40.0},
        {"order_id": "8", "amount": 5.0},
        {"order_id": "9", "amount": 6.0},
    ]
    assert len(model.calls) == 2  # the graph moved once, with the three answers
    final = world.stub.of("chat.update")[-1]
    assert final.payload["ts"] == posted["ts"] and buttons(final.blocks()) == []
    assert "3 requests, none waiting any more" in all_text(final.blocks())
    assert_sent_valid(world.stub.calls, set(ids))


@pytest.mark.parametrize(
    ("allowed", "ends"),
    [
        (("approve", "respond"), ExecutionStatus.COMPLETED),
        (("approve", "edit"), ExecutionStatus.FAILED),
    ],
)
async def test_an_expired_question_is_told_only_as_its_middleware_takes(
    world: SlackWorld, allowed: tuple[str, ...], ends: ExecutionStatus
) -> None:
    """The wire role's questions expire after a day. A middleware that takes no ``reject``
    is never sent one: where it takes ``respond`` the model reads that nobody approved in time;
    where it takes neither, the run fails with ``pause.expired``, and the move says so."""
    moves: list[ExecutionResumeEvent] = []
    world.app.on_execution_resume(moves.append)
    wires, model = Wires(), one_wire()
    graph = wire_agent(model, wires, allowed=allowed)
    agent = world.app.langgraph("wire-agent", graph, role=WireApprovalChannel)
    paused = await agent.ainvoke(ASK, thread_id="t-9", tenant_id=TEAM, owner_id=OWNER)
    [posted] = world.stub.of("chat.postMessage")
    pause_id = str(buttons(posted.blocks())[0]["value"])
    for _ in range(25):
        await world.clock.advance(timedelta(hours=1))
    await world.settle()

    done = await world.app.get_result(paused.execution_id, tenant_id=TEAM)
    assert done.status is ends
    assert wires.runs == []
    expired = [u for u in world.stub.of("chat.update") if u.payload["channel"] == APPROVALS]
    assert expired and all("nobody answered in time" in all_text(u.blocks()) for u in expired)
    if ends is ExecutionStatus.COMPLETED:
        [said] = contents_of_tool_messages(model)
        assert said.startswith("nobody approved the call to wire in time (it expired at ")
        return
    assert len(model.calls) == 1  # the model is not called again: the run failed
    row = await inspect_app(world.app).store.get(paused.execution_id)
    assert row is not None and row.error is not None
    assert row.error.code == "pause.expired"
    assert row.error.message.startswith("nobody approved the call to wire in time")
    [failed] = [m for m in moves if m.error is not None]
    assert isinstance(failed.error, PauseExpiredError) and failed.by_sweep
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
