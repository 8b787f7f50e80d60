"""A policy's routed count on Slack (issue 29 with 28's routes): a wire of 10,000 or more is
asked as needing two approvers — said on the message, no "allow similar" button (a grant is
one person's) — the first signed click is counted and shown, the requester's refused, the
second distinct approver's runs it once; a small wire is asked as its role asks (one click,
grants offered)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot import ExecutionStatus, PauseStatus
from bot.testing import call_tool
from channels.kit.texts import SELF_APPROVAL, approval_counted
from channels.slack import slack_channel
from channels.slack.render import APPROVE_ACTION
from channels.slack.render_grants import GRANT_ACTION
from tests.apps import sample_application
from tests.routed_four_eyes import (
    BIG_WIRE,
    SMALL_WIRE,
    RoutedWireApprovalChannel,
    RoutedWireTool,
    routed_wire_agent,
)
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import ACCOUNTANT, APPROVALS, FINANCE, MANAGER
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_lists import pending_of

AUDITOR = "U0AUDITOR"

SlackRoutedWireChannel = slack_channel(
    RoutedWireApprovalChannel,
    name="slack-routed-wire-approval-channel",
    conversation=APPROVALS,
    approvers=[MANAGER, FINANCE],
)
RoutedAgent = routed_wire_agent("slack-routed-wires")
ROUTED = sample_application(
    "slack-routed-wires", agent=RoutedAgent, channels=[SlackRoutedWireChannel]
)


@pytest.fixture
async def routed(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    async with open_world(
        stub,
        f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        application=(ROUTED.application, RoutedAgent, ROUTED.workflow),
    ) as world:
        world.stub.groups[FINANCE] = [ACCOUNTANT, AUDITOR]
        yield world


def _actions(blocks: list[dict[str, object]]) -> list[str]:
    return [str(b["action_id"]) for b in buttons(blocks)]


async def test_a_big_wire_needs_two_approvers_on_slack_and_offers_no_grant(
    routed: SlackWorld,
) -> None:
    world = routed
    world.llm.then_return(call_tool(RoutedWireTool, BIG_WIRE), "wired")
    result = await world.execute("wire it", owner=ACCOUNTANT)
    assert result.status is ExecutionStatus.PAUSED
    [posted] = world.stub.of("chat.postMessage")
    assert "Needs 2 approvals, each by a different person." in all_text(posted.blocks())
    assert GRANT_ACTION not in _actions(posted.blocks())
    pause_id = str(buttons(posted.blocks())[0]["value"])
    listed = await pending_of(world, MANAGER)  # listed, with no "allow similar" either
    assert GRANT_ACTION not in _actions(listed["blocks"])

    await world.click(ACCOUNTANT, APPROVE_ACTION, pause_id)  # the requester: refused
    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    told = [(c.payload["user"], c.payload["text"]) for c in world.stub.of("chat.postEphemeral")]
    assert told == [(ACCOUNTANT, SELF_APPROVAL), (MANAGER, approval_counted(1))]
    update = world.stub.of("chat.update")[-1]
    assert f"Approved by <@{MANAGER}> · 1 of 2 needed" in all_text(update.blocks())
    assert GRANT_ACTION not in _actions(update.blocks())
    assert world.ledger.runs == []

    await world.click(AUDITOR, APPROVE_ACTION, pause_id)
    await world.settle()
    assert world.ledger.runs == [("wire", BIG_WIRE)]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.TAKEN
    assert [a.by for a in pause.approvals] == [MANAGER, AUDITOR]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_small_wire_is_asked_as_its_role_asks(routed: SlackWorld) -> None:
    world = routed
    world.llm.then_return(call_tool(RoutedWireTool, SMALL_WIRE), "wired")
    await world.execute("wire it", owner=ACCOUNTANT)
    [posted] = world.stub.of("chat.postMessage")
    assert "Needs 2 approvals" not in all_text(posted.blocks())
    assert GRANT_ACTION in _actions(posted.blocks())
    await world.click(MANAGER, APPROVE_ACTION, str(buttons(posted.blocks())[0]["value"]))
    await world.settle()
    assert world.ledger.runs == [("wire", SMALL_WIRE)]
