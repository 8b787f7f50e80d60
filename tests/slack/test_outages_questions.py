"""A question asked while Slack fails is not lost, and its execution does not fail: it waits,
not yet delivered, and the recovery sweep asks it again once Slack answers — once, even when
Slack had posted it and withheld its answer (a hang); a click on such a message is recorded and
its tool runs once. A channel error trying again cannot mend still fails the step (issue 24,
findings 1 and 2)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot import ExecutionStatus
from bot.core.errors import AgentFailedError, ChannelUnavailableError
from bot.testing import call_tool
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import buttons
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import APPROVALS, MANAGER, RefundCardTool
from tests.slack.stub import TEAM, SlackStub

RECOVERED = timedelta(seconds=15)  # past the lease (8 s) and a sweep or two (3 s)


@pytest.fixture
async def quick_world(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    """The office, its Slack calls given up after 0.5 s (a hang costs half a second)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    async with open_world(stub, url, api_timeout_seconds=0.5) as opened:
        yield opened


async def ask_while_failing(world: SlackWorld, kind: str) -> str:
    """Ask for a refund while Slack fails with ``kind``; the execution's id."""
    world.llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}), "done")
    await world.stub.fail_all(kind, "chat.postMessage")
    with pytest.raises(ChannelUnavailableError):
        await world.execute("refund order 7")
    [pending] = await world.app.list_pending(tenant_id=TEAM)
    assert not pending.delivered  # waits, not yet delivered (/pending, the web inbox)
    return pending.execution_id


@pytest.mark.parametrize("kind", ["500", "429", "refused", "hang"])
async def test_a_question_slack_failed_is_asked_once_when_it_is_back(
    quick_world: SlackWorld, kind: str
) -> None:
    world = quick_world
    execution_id = await ask_while_failing(world, kind)
    result = await world.app.get_result(execution_id, tenant_id=TEAM)
    assert result.status is not ExecutionStatus.FAILED

    await world.clock.advance(RECOVERED)  # Slack still failing: asked again, still waits
    await world.stub.restore()
    await world.clock.advance(RECOVERED)

    posted = [m for m in world.stub.posted if m["channel"] == APPROVALS]
    assert len(posted) == 1  # asked once, a hung post found rather than posted again
    question = [c for c in world.stub.of("chat.postMessage") if c.payload["channel"] == APPROVALS]
    pause_id = str(buttons(question[-1].blocks())[0]["value"])
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.ts == posted[0]["ts"]
    result = await world.app.get_result(execution_id, tenant_id=TEAM)
    assert result.status is ExecutionStatus.PAUSED

    assert (await world.click(MANAGER, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]
    result = await world.app.get_result(execution_id, tenant_id=TEAM)
    assert result.status is ExecutionStatus.COMPLETED


async def test_a_click_on_a_question_posted_during_a_hang_runs_its_tool_once(
    quick_world: SlackWorld,
) -> None:
    """Slack posted the question and withheld its answer: the message has buttons before the
    bot knows it was asked. A click on it is recorded and the run goes on with it."""
    world = quick_world
    execution_id = await ask_while_failing(world, "hang")
    await world.stub.restore()
    [hung] = world.stub.of("chat.postMessage")
    pause_id = str(buttons(hung.blocks())[0]["value"])

    assert (await world.click(MANAGER, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    await world.clock.advance(RECOVERED)
    await world.settle()

    assert [name for name, _ in world.ledger.runs] == ["refund"]
    result = await world.app.get_result(execution_id, tenant_id=TEAM)
    assert result.status is ExecutionStatus.COMPLETED
    assert len(world.stub.posted) >= 1
    assert len([m for m in world.stub.posted if m["channel"] == APPROVALS]) == 1


async def test_a_channel_slack_refuses_still_fails_the_step(quick_world: SlackWorld) -> None:
    world = quick_world
    world.stub.channel_errors[APPROVALS] = "channel_not_found"
    world.llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}), "done")
    with pytest.raises(AgentFailedError, match="channel_not_found"):
        await world.execute("refund order 7")
    assert await world.app.list_pending(tenant_id=TEAM) == []  # failed: nothing waits
