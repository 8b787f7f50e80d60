"""A question an approval policy decides at once is never posted: the requester reads in their
Slack thread that it was approved automatically, by which policy and why (issue 28)."""

from __future__ import annotations

from bot import ExecutionStatus, PauseResolution, WorkflowStartText
from bot.testing import call_tool
from tests.slack.checks import assert_sent_valid
from tests.slack.conftest import OWNER_CHANNEL, SlackWorld
from tests.slack.office import APPROVALS, OWNER, SlackOfficeWorkflow, SmallRefundCardTool
from tests.slack.test_notes import THREAD


async def test_a_refund_the_policy_approves_is_told_in_the_requester_s_thread(
    world: SlackWorld,
) -> None:
    world.llm.then_return(call_tool(SmallRefundCardTool, {"order_id": "7", "amount": 20}), "ok")
    result = await world.app.execute(
        SlackOfficeWorkflow,
        WorkflowStartText(text="refund order 7"),
        tenant_id=world.tenant,
        owner_id=OWNER,
        thread_id=THREAD.thread_id(),
        record=True,
    )
    assert result.status is ExecutionStatus.COMPLETED
    assert [run for run, _ in world.ledger.runs] == ["small-refund"]
    [told] = world.stub.of("chat.postMessage")  # no approval message, no waiting note
    assert (told.payload["channel"], told.payload["thread_ts"]) == (OWNER_CHANNEL, THREAD.ts)
    assert told.payload["text"] == (
        ":white_check_mark: *Refunds a card, small ones at once* was approved automatically "
        "by small-refund-policy: under 50.00"
    )
    assert all(c.payload.get("channel") != APPROVALS for c in world.stub.of("chat.postMessage"))
    assert result.record is not None
    [entry] = result.record.pauses
    assert (entry.resolution, entry.policy) == (PauseResolution.DECIDED, "small-refund-policy")
    assert_sent_valid(world.stub.calls, set())


async def test_a_refund_over_the_bound_is_posted_for_approval_as_usual(world: SlackWorld) -> None:
    world.llm.then_return(call_tool(SmallRefundCardTool, {"order_id": "7", "amount": 80}), "ok")
    result = await world.execute("refund order 7", owner=OWNER, thread=THREAD)
    assert result.status is ExecutionStatus.PAUSED
    question, note = world.stub.of("chat.postMessage")
    assert question.payload["channel"] == APPROVALS
    assert note.payload["thread_ts"] == THREAD.ts
    assert world.ledger.runs == []
