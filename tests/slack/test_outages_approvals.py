"""A counted approval's update of a question needing three approvals is owed to Slack through
the outbox (the kind of a closed question's update): when Slack fails the ``chat.update`` of the
second approval, the message shows "2 of 3" once Slack is back, once; when Slack takes it at
once, nothing is updated twice (issue 24, finding 3)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot import ChannelOf, ExecutionStatus, PauseAnswerer, PauseStatus, channel_role, tool
from bot.testing import FakeClock, call_tool
from channels.slack import slack_channel
from channels.slack.button_values import read_answer_value
from channels.slack.render import APPROVE_ACTION
from tests.apps import sample_agent, sample_application
from tests.four_eyes import WIRE, WireInput, WireReplyInterpreter
from tests.office import Ledger
from tests.slack import conftest
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import ACCOUNTANT, APPROVALS, FINANCE, MANAGER
from tests.slack.stub import TEAM, SlackStub

AUDITOR, CONTROLLER = "U0AUDITOR", "U0CONTROL"
CAUGHT_UP = timedelta(seconds=40)


class _AnHourLater(FakeClock):
    def __init__(self) -> None:
        super().__init__()
        self._now += timedelta(hours=1)


@channel_role(
    name="three-eyes-wire-approval-channel",
    description="Three approvers approve wires",
    approves=WireInput,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=WireReplyInterpreter,
    required_approvals=3,
)
class ThreeEyesWireChannel(ChannelOf): ...


SlackThreeEyesWireChannel = slack_channel(
    ThreeEyesWireChannel,
    name="slack-three-eyes-wire-approval-channel",
    conversation=APPROVALS,
    approvers=[MANAGER, FINANCE],
)


@tool(
    name="three-eyes-wire-tool",
    description="Sends a wire transfer",
    input=WireInput,
    channel=ThreeEyesWireChannel,
    deps=[Ledger],
)
class ThreeEyesWireTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: WireInput) -> str:
        self.ledger.runs.append(("wire", input.model_dump()))
        return "sent"


ThreeEyesAgent = sample_agent("slack-three-eyes", tools=[ThreeEyesWireTool], description="Wires")
THREE_EYES = sample_application(
    "slack-three-eyes", agent=ThreeEyesAgent, channels=[SlackThreeEyesWireChannel]
)


@pytest.fixture
async def three_eyes(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    async with open_world(
        stub,
        f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        application=(THREE_EYES.application, ThreeEyesAgent, THREE_EYES.workflow),
    ) as world:
        world.stub.groups[FINANCE] = [ACCOUNTANT, AUDITOR, CONTROLLER]
        yield world


async def _asked(world: SlackWorld) -> str:
    world.llm.then_return(call_tool(ThreeEyesWireTool, WIRE), "wired")
    result = await world.execute("wire it", owner=ACCOUNTANT)
    assert result.status is ExecutionStatus.PAUSED
    [posted] = world.stub.of("chat.postMessage")
    return str(buttons(posted.blocks())[0]["value"])


def _counts(world: SlackWorld) -> list[str]:
    """What each update of the question said of its approvals ("1 of 3", ...)."""
    shown = []
    for call in world.stub.of("chat.update"):
        text = all_text(call.blocks())
        shown.append(next((f"{n} of 3" for n in (1, 2, 3) if f"{n} of 3 needed" in text), text))
    return shown


@pytest.mark.parametrize("kind", ["500", "429"])
async def test_a_second_approval_shown_once_slack_is_back(
    three_eyes: SlackWorld, kind: str
) -> None:
    world = three_eyes
    value = await _asked(world)
    pause_id = read_answer_value(value).pause_id
    await world.click(MANAGER, APPROVE_ACTION, value)
    await world.settle()
    assert _counts(world) == ["1 of 3"]

    await world.stub.fail_all(kind, "chat.update")
    assert (await world.click(AUDITOR, APPROVE_ACTION, value)).status == 200
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert len(pause.approvals) == 2
    await world.clock.advance(CAUGHT_UP)  # Slack still failing: still owed
    assert _counts(world) == ["1 of 3"]

    await world.stub.restore()
    await world.clock.advance(CAUGHT_UP)
    await world.settle()
    assert _counts(world) == ["1 of 3", "2 of 3"]
    final = world.stub.of("chat.update")[-1]
    assert f"<@{AUDITOR}>" in all_text(final.blocks())
    assert buttons(final.blocks())  # still offered to the third
    await world.clock.advance(CAUGHT_UP)
    assert len(world.stub.of("chat.update")) == 2  # said once
    assert world.ledger.runs == []
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_each_approval_updates_the_message_once_and_the_third_shows_the_outcome(
    three_eyes: SlackWorld,
) -> None:
    world = three_eyes
    pause_id = await _asked(world)
    for approver in (MANAGER, AUDITOR):
        await world.click(approver, APPROVE_ACTION, pause_id)
        await world.settle()
    await world.clock.advance(CAUGHT_UP)
    assert _counts(world) == ["1 of 3", "2 of 3"]

    await world.click(CONTROLLER, APPROVE_ACTION, pause_id)
    await world.settle()
    await world.clock.advance(CAUGHT_UP)
    assert world.ledger.runs == [("wire", WIRE)]
    updates = world.stub.of("chat.update")
    assert len(updates) == 3
    assert buttons(updates[-1].blocks()) == []


async def test_an_owed_count_is_moot_once_the_message_shows_the_outcome(
    three_eyes: SlackWorld,
) -> None:
    world = three_eyes
    pause_id = await _asked(world)
    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    await world.stub.fail_all("500", "chat.update")
    for approver in (AUDITOR, CONTROLLER):  # the count owed, then the outcome owed
        await world.click(approver, APPROVE_ACTION, pause_id)
        await world.settle()
    assert world.ledger.runs == [("wire", WIRE)]

    await world.stub.restore()
    await world.clock.advance(CAUGHT_UP)
    await world.settle()
    await world.clock.advance(CAUGHT_UP)
    updates = world.stub.of("chat.update")
    assert _counts(world)[0] == "1 of 3"
    assert "2 of 3" not in _counts(world)  # superseded by the outcome
    assert buttons(updates[-1].blocks()) == []
    assert len(updates) == 2  # the outcome shown once


async def test_an_approval_counted_by_a_process_that_died_before_owing_it_is_shown_next_start(
    stub: SlackStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    application = (THREE_EYES.application, ThreeEyesAgent, THREE_EYES.workflow)
    async with open_world(stub, url, application=application) as first:
        first.stub.groups[FINANCE] = [ACCOUNTANT, AUDITOR, CONTROLLER]
        pause_id = await _asked(first)

        async def died(pause: object, *, try_now: bool = True) -> None:
            """The process dies once the approval is recorded, before its update is owed."""

        monkeypatch.setattr(first.bot.gateway, "owe_approvals", died)
        assert (await first.click(MANAGER, APPROVE_ACTION, pause_id)).status == 200
        await first.settle()
        assert _counts(first) == []
    monkeypatch.setattr(conftest, "FakeClock", _AnHourLater)  # the next start, later on
    async with open_world(stub, url, application=application) as second:
        await second.clock.advance(CAUGHT_UP)
        await second.settle()
        assert _counts(second) == ["1 of 3"]
        await second.clock.advance(CAUGHT_UP)
        assert _counts(second) == ["1 of 3"]
