"""Reject with a reason and edit & approve, through modals whose metadata is signed; what the
runtime refuses (a number that is no number, a reason the role requires) keeps the modal open
with the field's error."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from bot import PauseStatus, ToolCallApprovalDecision
from bot.core.field_errors import NOT_FINITE
from bot.runtime.decisions import REASON_REQUIRED, REASON_REQUIRED_IN_WORDS
from channels.slack.render import EDIT_ACTION, EDIT_MODAL, REJECT_ACTION, REJECT_MODAL
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, OWNER, SECRET_EMAIL, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_expense, ask_refund
from tests.slack.test_messages import FIRST_POST, thread_posts


def reason(text: str | None) -> dict[str, Any]:
    return {"reason": {"reason": {"type": "plain_text_input", "value": text}}}


def edits(order_id: str, amount: str | None, email: str | None = None) -> dict[str, Any]:
    return {
        "order_id": {"value": {"type": "plain_text_input", "value": order_id}},
        "amount": {"value": {"type": "number_input", "value": amount}},
        "email": {"value": {"type": "plain_text_input", "value": email}},
    }


async def open_modal(world: SlackWorld, action: str, pause_id: str) -> dict[str, Any]:
    response = await world.click(MANAGER, action, pause_id)
    assert response.status == 200
    await world.settle()
    [opened] = world.stub.of("views.open")
    assert opened.payload["trigger_id"].startswith("trigger-")
    return opened.view()


async def test_reject_opens_a_modal_and_its_reason_rejects(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, REJECT_ACTION, pause_id)
    assert view["callback_id"] == REJECT_MODAL
    assert pause_id not in all_text(view)

    response = await world.submit(MANAGER, view, reason("amount too high"))
    assert response.status == 200
    assert await response.text() == ""  # the modal closes
    await world.settle()

    assert world.ledger.runs == []
    [update] = world.stub.of("chat.update")
    shown = all_text(update.blocks())
    assert f"*Rejected* by <@{MANAGER}>" in shown and "amount too high" in shown
    assert buttons(update.blocks()) == []
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.decision == ToolCallApprovalDecision(
        approved=False, reason="amount too high"
    )
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_tampered_modal_is_refused_and_nothing_is_resumed(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, REJECT_ACTION, pause_id)
    body, mac = view["private_metadata"].rsplit(".", 1)
    document = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    document["p"] = "f" * 32  # another pause, the same signature
    changed = base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")
    forged = dict(view, private_metadata=f"{changed}.{mac}")

    response = await world.submit(MANAGER, forged, reason("no"))
    assert response.status == 200
    answer = json.loads(await response.text())
    assert answer["response_action"] == "errors"
    assert "could not be verified" in answer["errors"]["reason"]

    # signed for another user: refused as well
    response = await world.submit(STRANGER, view, reason("no"))
    assert json.loads(await response.text())["response_action"] == "errors"
    await world.settle()

    found = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert found is not None and found.status is PauseStatus.PENDING
    assert world.stub.of("chat.update") == []


async def test_a_non_approver_gets_no_modal(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    await world.click(STRANGER, REJECT_ACTION, pause_id)
    await world.settle()

    assert world.stub.of("views.open") == []
    assert "not one of the approvers" in world.stub.of("chat.postEphemeral")[0].payload["text"]


async def test_edit_shows_the_tool_input_without_sensitive_values(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, EDIT_ACTION, pause_id)

    assert view["callback_id"] == EDIT_MODAL
    block_ids = [block.get("block_id") for block in view["blocks"] if block["type"] == "input"]
    assert block_ids == ["order_id", "amount", "email"]
    assert SECRET_EMAIL not in json.dumps(view)
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_edit_with_invalid_input_keeps_the_modal_open_with_errors(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, EDIT_ACTION, pause_id)

    response = await world.submit(MANAGER, view, edits("7", "-5"))

    assert response.status == 200
    answer = json.loads(await response.text())
    assert answer["response_action"] == "errors"
    assert set(answer["errors"]) == {"amount"}
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert world.ledger.runs == []


async def test_edit_with_valid_input_approves_with_the_overrides(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, EDIT_ACTION, pause_id)

    response = await world.submit(MANAGER, view, edits("7", "15", email="new@example.com"))
    assert response.status == 200
    assert await response.text() == ""
    await world.settle()

    assert world.ledger.runs == [
        ("refund", {"order_id": "7", "amount": 15.0, "email": "new@example.com"})
    ]
    [update] = world.stub.of("chat.update")
    shown = all_text(update.blocks())
    assert "Approved with changes" in shown and "15.0" in shown
    assert "new@example.com" not in json.dumps(update.payload)  # edited, still masked
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_edit_submitted_after_the_question_closed_is_told(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, EDIT_ACTION, pause_id)
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None
    await world.app.cancel(pause.thread_id, tenant_id=TEAM)

    response = await world.submit(MANAGER, view, edits("7", "15"))
    assert await response.text() == ""
    await world.settle()

    assert world.ledger.runs == []
    assert world.stub.of("chat.postEphemeral")[-1].payload["text"] == (
        "This request is no longer needed."
    )


async def test_a_tampered_edit_modal_is_refused_on_its_first_input(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, EDIT_ACTION, pause_id)
    body, _ = view["private_metadata"].rsplit(".", 1)
    forged = dict(view, private_metadata=f"{body}.{'0' * 64}")

    response = await world.submit(MANAGER, forged, edits("7", "15"))

    answer = json.loads(await response.text())
    assert answer["response_action"] == "errors"
    assert list(answer["errors"]) == ["order_id"]
    await world.settle()
    assert world.ledger.runs == []


# --------------------------------------------------------------------------------------------
# What the runtime refuses, shown in the modal: numbers that are no numbers, a required reason.


@pytest.mark.parametrize("typed", ["inf", "-inf", "nan", "1e400", "Infinity"])
async def test_an_edit_to_a_number_that_is_no_number_keeps_the_modal_open_on_its_field(
    world: SlackWorld, typed: str
) -> None:
    """Before, the modal closed, the page said approved with changes, the run failed on
    ``None`` and the requester was sent pydantic's text with its documentation link."""
    pause_id = await ask_refund(world)
    view = await open_modal(world, EDIT_ACTION, pause_id)

    response = await world.submit(MANAGER, view, edits("7", typed))

    assert response.status == 200
    answer = json.loads(await response.text())
    assert answer == {"response_action": "errors", "errors": {"amount": NOT_FINITE}}
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert world.ledger.runs == []
    assert world.stub.of("chat.update") == []
    assert all("pydantic" not in json.dumps(call.payload) for call in world.stub.calls)

    response = await world.submit(MANAGER, view, edits("7", "1.5"))
    assert await response.text() == ""
    await world.settle()
    assert [run[1]["amount"] for run in world.ledger.runs] == [1.5]


async def test_the_reject_modal_of_a_role_that_requires_a_reason_requires_it(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, REJECT_ACTION, pause_id)
    [block] = [b for b in view["blocks"] if b["type"] == "input"]
    assert block["block_id"] == "reason" and block["optional"] is False

    for blank in (None, "   "):  # what a forged (or older) modal can send
        response = await world.submit(MANAGER, view, reason(blank))
        answer = json.loads(await response.text())
        assert answer == {"response_action": "errors", "errors": {"reason": REASON_REQUIRED}}
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert world.stub.of("chat.update") == []

    response = await world.submit(MANAGER, view, reason("wrong customer"))
    assert await response.text() == ""
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.decision == ToolCallApprovalDecision(
        approved=False, reason="wrong customer"
    )


async def test_the_reject_modal_of_a_role_with_an_optional_reason_takes_none(
    world: SlackWorld,
) -> None:
    pause_id = await ask_expense(world, None)
    response = await world.click(OWNER, REJECT_ACTION, pause_id)
    assert response.status == 200
    await world.settle()
    [opened] = world.stub.of("views.open")
    view = opened.view()
    [block] = [b for b in view["blocks"] if b["type"] == "input"]
    assert block.get("optional") is True

    response = await world.submit(OWNER, view, reason(None))
    assert await response.text() == ""
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.decision == ToolCallApprovalDecision(approved=False)


async def test_a_bare_reject_in_the_thread_of_a_role_that_requires_a_reason_says_how(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)

    await world.message(MANAGER, "reject", thread_ts=FIRST_POST)
    await world.settle()

    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    [said] = thread_posts(world)
    assert said.startswith(f'I could not read "reject" as an answer. {REASON_REQUIRED_IN_WORDS}')
    assert world.stub.of("chat.update") == []

    await world.message(MANAGER, "reject: wrong customer", thread_ts=FIRST_POST)
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.decision == ToolCallApprovalDecision(
        approved=False, reason="wrong customer"
    )
