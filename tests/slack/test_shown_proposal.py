"""What the approver was shown is what is checked, in Slack: an answer button carries which
proposal its surface showed (``channels.slack.button_values``), so a click on a message an
edit replaced meanwhile (its ``chat.update`` not yet seen) is refused, never counted for the
new proposal; signed requests against the Web API stub, on the two-approver wire."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool

from bot import ExecutionStatus, PauseStatus
from bot.testing.llm import ScriptedChatModel
from channels.kit.texts import PROPOSAL_CHANGED, PROPOSAL_MAY_HAVE_CHANGED
from channels.slack.button_values import read_answer_value
from channels.slack.render import APPROVE_ACTION, EDIT_ACTION
from tests.four_eyes import WIRE, WireApprovalChannel
from tests.langgraph.conftest import ASK
from tests.langgraph.kit import approval_agent, tool_calls
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import ACCOUNTANT, FINANCE, MANAGER
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_four_eyes import AUDITOR, FOUR_EYES, FourEyesAgent, _asked, _told

EDITED = {**WIRE, "amount": 20000.0}


@pytest.fixture
async def four_eyes(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    """The two-approver wire of ``test_four_eyes``, on a SQLite file."""
    async with open_world(
        stub,
        f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        application=(FOUR_EYES.application, FourEyesAgent, FOUR_EYES.workflow),
    ) as world:
        world.stub.groups[FINANCE] = [ACCOUNTANT, AUDITOR]
        yield world


def _edits(amount: str) -> dict[str, Any]:
    return {
        "account": {"value": {"type": "plain_text_input", "value": WIRE["account"]}},
        "amount": {"value": {"type": "number_input", "value": amount}},
    }


async def _edit_modal(world: SlackWorld, user: str, value: str) -> dict[str, Any]:
    opened = len(world.stub.of("views.open"))
    assert (await world.click(user, EDIT_ACTION, value)).status == 200
    await world.settle()
    assert len(world.stub.of("views.open")) == opened + 1
    return world.stub.of("views.open")[-1].view()


async def _edited_by_manager(world: SlackWorld, old_value: str) -> str:
    """The manager changes the amount (their approval, the first of the new proposal); the
    value of the updated message's Approve."""
    view = await _edit_modal(world, MANAGER, old_value)
    assert (await world.submit(MANAGER, view, _edits("20000"))).status == 200
    await world.settle()
    return str(buttons(world.stub.of("chat.update")[-1].blocks())[0]["value"])


async def _approvals(world: SlackWorld, pause_id: str) -> list[tuple[str, bool]]:
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    return [(a.by, a.counted) for a in pause.approvals]


async def test_a_click_on_the_message_an_edit_replaced_is_refused_and_the_new_one_counts(
    four_eyes: SlackWorld,
) -> None:
    world = four_eyes
    old = await _asked(world)
    pause_id = read_answer_value(old).pause_id
    assert read_answer_value(old).round == 0

    new = await _edited_by_manager(world, old)
    assert read_answer_value(new).pause_id == pause_id and read_answer_value(new).round == 1
    assert "20,000" in all_text(world.stub.of("chat.update")[-1].blocks())

    await world.click(AUDITOR, APPROVE_ACTION, old)  # before their Slack showed the update
    await world.settle()
    assert _told(world)[-1] == (AUDITOR, PROPOSAL_CHANGED)
    assert await _approvals(world, pause_id) == [(MANAGER, True)]
    assert world.ledger.runs == []

    await world.click(AUDITOR, APPROVE_ACTION, new)
    await world.settle()
    assert world.ledger.runs == [("wire", EDITED)]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_value_without_a_round_counts_for_the_first_proposal_only(
    four_eyes: SlackWorld,
) -> None:
    """A message posted before buttons carried the proposal: its click approves the question's
    own proposal, and is refused (may have changed) once an edit replaced it."""
    world = four_eyes
    old = await _asked(world)
    pause_id = read_answer_value(old).pause_id

    await world.click(AUDITOR, APPROVE_ACTION, pause_id)  # the old form: the pause id alone
    await world.settle()
    assert await _approvals(world, pause_id) == [(AUDITOR, True)]

    await _edited_by_manager(world, old)
    await world.click(AUDITOR, APPROVE_ACTION, pause_id)
    await world.settle()
    assert _told(world)[-1] == (AUDITOR, PROPOSAL_MAY_HAVE_CHANGED)
    assert await _approvals(world, pause_id) == [(AUDITOR, False), (MANAGER, True)]
    assert world.ledger.runs == []


async def test_an_edit_modal_opened_before_another_edit_is_refused_on_submit(
    four_eyes: SlackWorld,
) -> None:
    """The edit modal carries the proposal it showed (sealed in its metadata): submitted after
    another approver's edit replaced it, it changes nothing."""
    world = four_eyes
    old = await _asked(world)
    pause_id = read_answer_value(old).pause_id
    auditors = await _edit_modal(world, AUDITOR, old)  # shows the wire as asked

    await _edited_by_manager(world, old)
    assert (await world.submit(AUDITOR, auditors, _edits("1"))).status == 200
    await world.settle()
    assert _told(world)[-1] == (AUDITOR, PROPOSAL_CHANGED)
    assert await _approvals(world, pause_id) == [(MANAGER, True)]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.proposed_arguments == EDITED


async def test_pending_lists_the_proposal_standing_and_its_buttons_carry_it(
    four_eyes: SlackWorld,
) -> None:
    world = four_eyes
    old = await _asked(world)
    pause_id = read_answer_value(old).pause_id
    await _edited_by_manager(world, old)

    assert (await world.command(AUDITOR)).status == 200
    await world.settle()
    listed = world.stub.of("response_url")[-1].payload
    assert "20,000" in all_text(listed["blocks"]) and "25,000" not in all_text(listed["blocks"])
    [value] = [
        str(b["value"])
        for b in buttons(listed["blocks"])
        if str(b["action_id"]).startswith(APPROVE_ACTION)
    ]
    assert read_answer_value(value).round == 1

    await world.click(AUDITOR, f"{APPROVE_ACTION}:0", value, ephemeral=True)
    await world.settle()
    assert world.ledger.runs == [("wire", EDITED)]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_attached_graphs_question_is_checked_against_the_proposal_shown_too(
    four_eyes: SlackWorld,
) -> None:
    """A LangChain agent's wire under the two-approver role: the same buttons and the same
    check as a native tool's — the old message's click refused, the new one's runs it once."""
    world = four_eyes
    runs: list[dict[str, Any]] = []

    @tool("wire")
    def wire(account: str, amount: float) -> str:
        """Wire money to an account."""
        runs.append({"account": account, "amount": amount})
        return "wired"

    model = ScriptedChatModel(component="wire").then_return(tool_calls(("wire", WIRE)), "Done.")
    graph = approval_agent(model, [wire], asks_about="wire")
    agent = world.app.langgraph("wire-agent", graph, role=WireApprovalChannel)
    result = await agent.ainvoke(ASK, thread_id="t-1", tenant_id=TEAM, owner_id=ACCOUNTANT)
    assert result.status is ExecutionStatus.PAUSED
    old = str(buttons(world.stub.of("chat.postMessage")[-1].blocks())[0]["value"])
    assert read_answer_value(old).round == 0

    new = await _edited_by_manager(world, old)
    await world.click(AUDITOR, APPROVE_ACTION, old)
    await world.settle()
    assert _told(world)[-1] == (AUDITOR, PROPOSAL_CHANGED)
    assert runs == []

    await world.click(AUDITOR, APPROVE_ACTION, new)
    await world.settle()
    assert runs == [EDITED]
