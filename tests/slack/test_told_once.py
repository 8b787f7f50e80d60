"""A run's end is said once in its thread, however its answers arrive (at once, or racing)."""

from __future__ import annotations

import asyncio

from bot import ExecutionStatus
from bot.testing import call_tool
from channels.slack.render import APPROVE_ACTION
from channels.slack.threads import SlackThread
from tests.slack.checks import buttons
from tests.slack.conftest import OWNER_CHANNEL, SlackWorld
from tests.slack.office import MANAGER, OWNER, BookExpenseTool, RefundCardTool
from tests.slack.stub import TEAM


async def test_two_answers_of_one_run_arriving_at_once_tell_its_end_once(
    world: SlackWorld,
) -> None:
    thread = SlackThread(team=TEAM, channel=OWNER_CHANNEL, ts="1699999999.000200")
    world.llm.then_return(
        [
            call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}),
            call_tool(BookExpenseTool, {"purpose": "taxi", "amount": 12.0}),
        ],
        "all done",
    )
    result = await world.execute("refund and book", owner=OWNER, thread=thread)
    assert result.status is ExecutionStatus.PAUSED
    refund = next(
        m
        for m in world.stub.of("chat.postMessage")
        if m.payload["channel"] != OWNER_CHANNEL and buttons(m.blocks())
    )
    responses = await asyncio.gather(
        world.click(MANAGER, APPROVE_ACTION, str(buttons(refund.blocks())[0]["value"])),
        world.message(OWNER, "approve", channel=OWNER_CHANNEL, thread_ts=thread.ts),
    )
    await world.settle()
    assert [r.status for r in responses] == [200, 200]
    told = [
        m
        for m in world.stub.of("chat.postMessage")
        if m.payload.get("thread_ts") == thread.ts and m.payload.get("text") == "all done"
    ]
    assert len(told) == 1
    assert len(world.ledger.runs) == 2
