"""Two finance approvers for one wire in Slack, the paths tests/slack/test_four_eyes.py leaves
out (issue 29 audit): a rejection through the modal after one approval rejects with its reason;
an edit through the modal after one approval voids it, the message shows the new proposal and
the next approver approves that; a click after the question closed is told so, ephemerally."""

from __future__ import annotations

from typing import Any

from bot import PauseStatus
from channels.kit.texts import SELF_APPROVAL
from channels.slack.button_values import read_answer_value
from channels.slack.render import APPROVE_ACTION, EDIT_ACTION, REJECT_ACTION
from tests.four_eyes import WIRE
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import ACCOUNTANT, MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_four_eyes import AUDITOR, _asked, _told, four_eyes
from tests.slack.test_modals import reason

__all__ = ["four_eyes"]  # the fixture, shared


def _wire_edits(account: str, amount: str) -> dict[str, Any]:
    return {
        "account": {"value": {"type": "plain_text_input", "value": account}},
        "amount": {"value": {"type": "number_input", "value": amount}},
    }


async def _modal(world: SlackWorld, who: str, action: str, value: str) -> dict[str, Any]:
    opened_before = len(world.stub.of("views.open"))
    response = await world.click(who, action, value)
    assert response.status == 200
    await world.settle()
    opened = world.stub.of("views.open")
    assert len(opened) == opened_before + 1
    return opened[-1].view()


async def test_a_rejection_through_the_modal_after_one_approval_rejects_with_its_reason(
    four_eyes: SlackWorld,
) -> None:
    world = four_eyes
    value = await _asked(world)
    pause_id = read_answer_value(value).pause_id
    await world.click(MANAGER, APPROVE_ACTION, value)
    await world.settle()
    assert world.ledger.runs == []

    view = await _modal(world, AUDITOR, REJECT_ACTION, value)
    response = await world.submit(AUDITOR, view, reason("unknown account"))
    assert response.status == 200
    await world.settle()

    assert world.ledger.runs == []
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is not PauseStatus.PENDING
    final = world.stub.of("chat.update")[-1]
    assert buttons(final.blocks()) == []
    assert f"*Rejected* by <@{AUDITOR}>" in all_text(final.blocks())
    assert "unknown account" in all_text(final.blocks())
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_edit_through_the_modal_after_one_approval_is_what_the_next_one_approves(
    four_eyes: SlackWorld,
) -> None:
    world = four_eyes
    value = await _asked(world)
    pause_id = read_answer_value(value).pause_id
    await world.click(MANAGER, APPROVE_ACTION, value)
    await world.settle()

    view = await _modal(world, AUDITOR, EDIT_ACTION, value)
    response = await world.submit(AUDITOR, view, _wire_edits("DE-1", "20000"))
    assert response.status == 200 and await response.text() == ""
    await world.settle()
    assert world.ledger.runs == []  # the edit is one approval of the new proposal
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert [(a.by, a.counted) for a in pause.approvals] == [(MANAGER, False), (AUDITOR, True)]
    shown = world.stub.of("chat.update")[-1]
    text = all_text(shown.blocks())
    assert "20,000.00" in text and f"Approved by <@{AUDITOR}> · 1 of 2 needed" in text

    # the message's buttons now carry the new proposal: the old value is refused
    stale = await world.click(MANAGER, APPROVE_ACTION, value)
    assert stale.status == 200
    await world.settle()
    assert world.ledger.runs == []
    fresh = next(b for b in buttons(shown.blocks()) if b["action_id"] == APPROVE_ACTION)
    await world.click(MANAGER, APPROVE_ACTION, str(fresh["value"]))
    await world.settle()
    assert world.ledger.runs == [("wire", {**WIRE, "amount": 20000.0})]
    closed = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert closed is not None
    assert [(a.by, a.arguments["amount"], a.counted) for a in closed.approvals] == [
        (MANAGER, 25000.0, False),
        (AUDITOR, 20000.0, True),
        (MANAGER, 20000.0, True),
    ]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_click_after_the_second_approval_is_told_it_was_answered_and_runs_nothing(
    four_eyes: SlackWorld,
) -> None:
    world = four_eyes
    value = await _asked(world)
    await world.click(MANAGER, APPROVE_ACTION, value)
    await world.click(AUDITOR, APPROVE_ACTION, value)
    await world.settle()
    assert world.ledger.runs == [("wire", WIRE)]
    for action in (APPROVE_ACTION, REJECT_ACTION):  # a third click, then a reject
        response = await world.click(MANAGER, action, value)
        assert response.status == 200
        await world.settle()
        assert "already answered" in _told(world)[-1][1]
    # the requester's click after it closed is told their own request is not theirs to answer
    # (the separation-of-duties check comes first): refused either way, nothing runs
    await world.click(ACCOUNTANT, APPROVE_ACTION, value)
    await world.settle()
    assert _told(world)[-1] == (ACCOUNTANT, SELF_APPROVAL)
    assert world.stub.of("views.open") == []  # no modal for a closed question
    assert world.ledger.runs == [("wire", WIRE)]
