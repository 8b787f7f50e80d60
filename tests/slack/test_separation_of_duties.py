"""Separation of duties in Slack: the requester is told they cannot approve their own wire,
the message says so up front, and someone else's click goes through."""

from __future__ import annotations

from bot import ExecutionStatus, PauseStatus
from bot.testing import call_tool
from channels.kit.texts import SELF_APPROVAL
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import ACCOUNTANT, FINANCE, MANAGER, WireMoneyTool
from tests.slack.stub import TEAM


async def test_the_requester_cannot_approve_their_own_wire(world: SlackWorld) -> None:
    world.stub.groups[FINANCE] = [ACCOUNTANT]
    world.llm.then_return(call_tool(WireMoneyTool, {"iban": "DE00", "amount": 5.0}), "wired")
    result = await world.execute("wire 5", owner=MANAGER)  # the manager asks for it
    assert result.status is ExecutionStatus.PAUSED
    [posted] = world.stub.of("chat.postMessage")
    pause_id = str(buttons(posted.blocks())[0]["value"])
    assert f"<@{MANAGER}> asked for this and cannot approve it" in all_text(posted.blocks())

    response = await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()

    assert response.status == 200
    [told] = world.stub.of("chat.postEphemeral")
    assert (told.payload["user"], told.payload["text"]) == (MANAGER, SELF_APPROVAL)
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert world.ledger.runs == []
    assert world.stub.of("chat.update") == []

    await world.click(ACCOUNTANT, APPROVE_ACTION, pause_id)
    await world.settle()

    assert [name for name, _ in world.ledger.runs] == ["wire"]
    [update] = world.stub.of("chat.update")
    assert f"by <@{ACCOUNTANT}>" in all_text(update.blocks())
    assert_sent_valid(world.stub.calls, {pause_id})
