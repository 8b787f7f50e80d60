"""Two finance approvers for one wire in Slack (``required_approvals=2``), as signed requests
against the Web API stub: the first click is counted and shown on the message (buttons kept),
a second click by the same person and the requester's are refused, the second approver's runs
the wire once, and a click after it is told it was answered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot import ExecutionStatus, PauseStatus
from bot.testing import call_tool
from channels.kit.texts import ALREADY_APPROVED, SELF_APPROVAL, approval_counted
from channels.slack import slack_channel
from channels.slack.button_values import read_answer_value
from channels.slack.render import APPROVE_ACTION
from tests.apps import sample_agent, sample_application
from tests.four_eyes import WIRE, WireApprovalChannel, WireTool
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import ACCOUNTANT, APPROVALS, FINANCE, MANAGER
from tests.slack.stub import TEAM, SlackStub

AUDITOR = "U0AUDITOR"  # a member of FINANCE too

SlackFourEyesWireChannel = slack_channel(
    WireApprovalChannel,
    name="slack-four-eyes-wire-approval-channel",
    conversation=APPROVALS,
    approvers=[MANAGER, FINANCE],
)
FourEyesAgent = sample_agent("slack-four-eyes", tools=[WireTool], description="Wires money")
FOUR_EYES = sample_application(
    "slack-four-eyes", agent=FourEyesAgent, channels=[SlackFourEyesWireChannel]
)


@pytest.fixture
async def four_eyes(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    async with open_world(
        stub,
        f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        application=(FOUR_EYES.application, FourEyesAgent, FOUR_EYES.workflow),
    ) as world:
        world.stub.groups[FINANCE] = [ACCOUNTANT, AUDITOR]
        yield world


async def _asked(world: SlackWorld) -> str:
    world.llm.then_return(call_tool(WireTool, WIRE), "wired")
    result = await world.execute("wire it", owner=ACCOUNTANT)  # a finance member asks
    assert result.status is ExecutionStatus.PAUSED
    [posted] = world.stub.of("chat.postMessage")
    assert "Needs 2 approvals, each by a different person." in all_text(posted.blocks())
    return str(buttons(posted.blocks())[0]["value"])


def _told(world: SlackWorld) -> list[tuple[str, str]]:
    return [(c.payload["user"], c.payload["text"]) for c in world.stub.of("chat.postEphemeral")]


async def test_two_approvers_one_wire_each_approval_shown_on_the_message(
    four_eyes: SlackWorld,
) -> None:
    world = four_eyes
    value = await _asked(world)  # the pause and the proposal shown (channels.slack.button_values)
    pause_id = read_answer_value(value).pause_id

    await world.click(MANAGER, APPROVE_ACTION, value)
    await world.settle()
    assert _told(world) == [(MANAGER, approval_counted(1))]
    [update] = world.stub.of("chat.update")
    text = all_text(update.blocks())
    assert f"Approved by <@{MANAGER}> · 1 of 2 needed" in text
    assert [b["action_id"] for b in buttons(update.blocks())][:1] == [APPROVE_ACTION]
    assert world.ledger.runs == []

    await world.click(MANAGER, APPROVE_ACTION, value)  # the same person again
    await world.click(ACCOUNTANT, APPROVE_ACTION, value)  # the requester
    await world.settle()
    assert _told(world)[1:] == [(MANAGER, ALREADY_APPROVED), (ACCOUNTANT, SELF_APPROVAL)]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert [a.by for a in pause.approvals] == [MANAGER]

    await world.click(AUDITOR, APPROVE_ACTION, value)
    await world.settle()
    assert world.ledger.runs == [("wire", WIRE)]
    final = world.stub.of("chat.update")[-1]
    assert buttons(final.blocks()) == []
    assert f"*Approved* by <@{MANAGER}> and <@{AUDITOR}> · 2 of 2" in all_text(final.blocks())

    await world.click(MANAGER, APPROVE_ACTION, value)  # after the second
    await world.settle()
    assert "already answered" in _told(world)[-1][1]
    assert world.ledger.runs == [("wire", WIRE)]
    assert_sent_valid(world.stub.calls, {pause_id})
