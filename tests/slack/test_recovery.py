"""A tree the recovery sweep continues tells Slack like any answer: the approval message shows
its outcome and the requester's thread hears how the run ended."""

from __future__ import annotations

from datetime import timedelta

from bot import Answered, ExecutionStatus
from bot.testing import call_tool
from channels.slack.threads import SlackThread
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, OWNER, RefundCardTool
from tests.slack.stub import TEAM

REQUESTER_THREAD = SlackThread(team=TEAM, channel="C0DESK", ts="1700000000.000100")


async def test_a_recovered_answer_updates_the_message_and_tells_the_requester(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund_in_thread(world)
    # phase 1 only, as an instance that died right after recording the click would leave it
    recorded = await world.app.answer(
        pause_id, tenant_id=TEAM, by=MANAGER, decision={"approved": True}, continue_run=False
    )
    assert isinstance(recorded, Answered)
    assert world.stub.of("chat.update") == []

    await world.clock.advance(timedelta(seconds=10))  # the recovery sweep
    await world.settle()

    assert len(world.ledger.runs) == 1
    updates = [u for u in world.stub.of("chat.update") if buttons(u.blocks()) == []]
    assert any(f"Approved* by <@{MANAGER}>" in all_text(u.blocks()) for u in updates)
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.closed
    told = [
        m
        for m in world.stub.of("chat.postMessage")
        if m.payload.get("thread_ts") == REQUESTER_THREAD.ts
        and "refund done" in str(m.payload.get("text"))
    ]
    assert len(told) == 1
    assert_sent_valid(world.stub.calls, {pause_id})


async def ask_refund_in_thread(world: SlackWorld) -> str:
    """Run the office until it asks for a refund, for a request started in the requester's
    Slack thread; returns the pause id (from the button)."""
    world.llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}))
    world.llm.then_return("refund done")
    result = await world.execute("refund order 7", owner=OWNER, thread=REQUESTER_THREAD)
    assert result.status is ExecutionStatus.PAUSED
    posted = [m for m in world.stub.of("chat.postMessage") if buttons(m.blocks())][-1]
    return str(buttons(posted.blocks())[0]["value"])
