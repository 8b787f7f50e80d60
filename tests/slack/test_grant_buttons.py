"""Standing grants from Slack (issue 28): "Approve and allow similar…" on a question whose role
offers grants opens a modal; its signed submission approves the call and records the grant;
the next matching ask is decided at once (the tool runs once, the audit names the grant), a
non-matching one is asked; the App Home lists the grant and its signed Revoke click revokes it
— then the next ask is asked again. Every view and message parsed by slack_sdk.models."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bot import ExecutionResult, ExecutionStatus, PauseResolution, PauseStatus, WorkflowStartText
from bot.testing import call_tool
from channels.kit.grants import BOUND_FIELD, HOURS_FIELD, SCOPE_FIELD
from channels.slack.render_grants import GRANT_ACTION, GRANT_MODAL, REVOKE_GRANT_ACTION
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import (
    APPROVALS,
    MANAGER,
    OWNER,
    STRANGER,
    GrantedRefundCardTool,
    SlackOfficeWorkflow,
)
from tests.slack.test_notes import THREAD


def grant_values(scope: str, hours: str = "8", bound: str | None = "200") -> dict[str, Any]:
    """What the grant modal holds when submitted (Slack's ``state.values``)."""
    return {
        SCOPE_FIELD: {SCOPE_FIELD: {"type": "radio_buttons", "selected_option": {"value": scope}}},
        HOURS_FIELD: {HOURS_FIELD: {"type": "static_select", "selected_option": {"value": hours}}},
        BOUND_FIELD: {BOUND_FIELD: {"type": "plain_text_input", "value": bound}},
    }


async def ask(world: SlackWorld, amount: float, *, owner: str = OWNER) -> ExecutionResult:
    """One granted refund asked for ``owner``: scripted to finish with "ok" once answered."""
    world.llm.then_return(
        call_tool(GrantedRefundCardTool, {"order_id": "7", "amount": amount}), "ok"
    )
    return await world.app.execute(
        SlackOfficeWorkflow,
        WorkflowStartText(text=f"refund {amount}"),
        tenant_id=world.tenant,
        owner_id=owner,
        thread_id=THREAD.thread_id(),
        record=True,
    )


def grant_button_of(world: SlackWorld) -> tuple[str, dict[str, Any]]:
    """The question's pause id and its "Approve and allow similar…" button."""
    question = [c for c in world.stub.of("chat.postMessage") if c.payload["channel"] == APPROVALS][
        -1
    ]
    [grant] = [b for b in buttons(question.blocks()) if b["action_id"] == GRANT_ACTION]
    return str(grant["value"]), dict(grant)


async def open_grant_modal(world: SlackWorld, pause_id: str, user: str = MANAGER) -> dict[str, Any]:
    before = len(world.stub.of("views.open"))
    response = await world.click(user, GRANT_ACTION, pause_id)
    assert response.status == 200
    await world.settle()
    opened = world.stub.of("views.open")
    assert len(opened) == before + 1
    return opened[-1].view()


async def grant_from_slack(world: SlackWorld) -> str:
    """Ask 120 for the owner, approve it with "allow requests of the owner up to 200 for 8 h"
    from the modal; the pause id."""
    result = await ask(world, 120)
    assert result.status is ExecutionStatus.PAUSED
    pause_id, button = grant_button_of(world)
    assert button["text"]["text"] == "Approve and allow similar…"
    view = await open_grant_modal(world, pause_id)
    assert view["callback_id"] == GRANT_MODAL
    shown = all_text(view)
    assert f"for requests of {OWNER}" in shown and "for this thread" in shown
    assert "for the agent slack-office" in shown
    [bound] = [b for b in view["blocks"] if b.get("block_id") == BOUND_FIELD]
    assert bound["element"]["initial_value"] == "120.00"  # the call's own amount by default
    response = await world.submit(MANAGER, view, grant_values("requester", "8", "200"))
    assert response.status == 200
    assert await response.text() == ""  # the modal closes
    await world.settle()
    return pause_id


async def test_approve_and_allow_similar_from_slack_then_the_next_matching_ask_is_decided(
    world: SlackWorld,
) -> None:
    pause_id = await grant_from_slack(world)
    # this call is approved: the tool ran once, the message says who approved it
    assert world.ledger.runs == [
        ("granted-refund", {"order_id": "7", "amount": 120.0, "email": "carol.secret@example.com"})
    ]
    pause = await world.app.find_pause(pause_id, tenant_id=world.tenant)
    assert pause is not None and pause.status is not PauseStatus.PENDING
    assert pause.responder == MANAGER
    # and the grant is recorded, told to the approver
    [grant] = await world.app.list_grants(tenant_id=world.tenant)
    assert (grant.granted_by, grant.scope.owner_id, dict(grant.constraint.at_most)) == (
        MANAGER,
        OWNER,
        {"amount": 200.0},
    )
    assert grant.expires_at - grant.created_at == timedelta(hours=8)
    told = [c.payload["text"] for c in world.stub.of("chat.postEphemeral")]
    assert any(t.startswith("Approved, and similar requests are allowed: ") for t in told), told

    # the next matching ask: decided at once by the grant, the tool runs once
    posted = len(world.stub.of("chat.postMessage"))
    result = await ask(world, 150)
    assert result.status is ExecutionStatus.COMPLETED
    assert [amount["amount"] for _, amount in world.ledger.runs] == [120.0, 150.0]
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.resolution is PauseResolution.DECIDED
    assert (entry.grant_id, entry.granted_by) == (grant.grant_id, MANAGER)
    questions = [c for c in world.stub.of("chat.postMessage")[posted:] if c.payload.get("blocks")]
    assert all(GRANT_ACTION not in str(c.payload) for c in questions)  # nothing was asked

    # not for an amount over the bound, nor for another requester
    world.llm.then_return(call_tool(GrantedRefundCardTool, {"order_id": "8", "amount": 250}))
    over = await world.app.execute(
        SlackOfficeWorkflow,
        WorkflowStartText(text="refund 250"),
        tenant_id=world.tenant,
        owner_id=OWNER,
    )
    assert over.status is ExecutionStatus.PAUSED
    world.llm.then_return(call_tool(GrantedRefundCardTool, {"order_id": "9", "amount": 50}))
    other = await world.app.execute(
        SlackOfficeWorkflow,
        WorkflowStartText(text="refund 50"),
        tenant_id=world.tenant,
        owner_id=STRANGER,
    )
    assert other.status is ExecutionStatus.PAUSED
    assert len(world.ledger.runs) == 2
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_revoked_from_the_app_home_the_next_ask_is_asked(world: SlackWorld) -> None:
    await world.event({"type": "app_home_opened", "user": MANAGER, "tab": "home"})
    await world.settle()
    assert "No standing grants" in all_text(world.stub.of("views.publish")[-1].view())
    await grant_from_slack(world)
    [grant] = await world.app.list_grants(tenant_id=world.tenant)
    # the Home the manager opened follows: the grant is listed there without opening it again
    assert "amount ≤ 200.00" in all_text(world.stub.of("views.publish")[-1].view())

    await world.event({"type": "app_home_opened", "user": MANAGER, "tab": "home"})
    await world.settle()
    home = world.stub.of("views.publish")[-1].view()
    shown = all_text(home)
    assert "Standing grants" in shown
    assert f"for requests of {OWNER}" in shown and "amount ≤ 200.00" in shown
    [revoke] = [
        b for b in buttons(home["blocks"]) if b["action_id"].startswith(REVOKE_GRANT_ACTION)
    ]
    assert revoke["value"] == grant.grant_id

    # someone who may not revoke it: refused, still in force
    response = await world.click(STRANGER, revoke["action_id"], grant.grant_id, home=True)
    assert response.status == 200
    await world.settle()
    assert [g.grant_id for g in await world.app.list_grants(tenant_id=world.tenant)] == [
        grant.grant_id
    ]
    refused = world.stub.of("views.publish")[-1].view()
    assert "Only who gave this grant or an approver of its role may revoke it." in all_text(refused)

    response = await world.click(MANAGER, revoke["action_id"], grant.grant_id, home=True)
    assert response.status == 200
    await world.settle()
    assert await world.app.list_grants(tenant_id=world.tenant) == []
    republished = world.stub.of("views.publish")[-1]
    assert republished.payload["user_id"] == MANAGER
    after = all_text(republished.view())
    assert after.startswith("") and "Revoked: " in after
    assert "No standing grants: every request is asked." in after

    result = await ask(world, 150)
    assert result.status is ExecutionStatus.PAUSED  # asked again
    assert len(world.ledger.runs) == 1
    assert_sent_valid(world.stub.calls, set())


async def test_a_bad_bound_keeps_the_modal_open_and_answers_nothing(world: SlackWorld) -> None:
    result = await ask(world, 120)
    pause_id, _ = grant_button_of(world)
    view = await open_grant_modal(world, pause_id)
    response = await world.submit(MANAGER, view, grant_values("agent", "8", "lots"))
    assert response.status == 200
    answer = await response.json()
    assert answer["response_action"] == "errors" and BOUND_FIELD in answer["errors"]
    await world.settle()
    assert world.ledger.runs == []
    pause = await world.app.find_pause(pause_id, tenant_id=world.tenant)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert await world.app.list_grants(tenant_id=world.tenant) == []
    assert result.status is ExecutionStatus.PAUSED


async def test_only_an_approver_may_open_or_submit_the_grant(world: SlackWorld) -> None:
    await ask(world, 120)
    pause_id, _ = grant_button_of(world)
    response = await world.click(STRANGER, GRANT_ACTION, pause_id)
    assert response.status == 200
    await world.settle()
    assert world.stub.of("views.open") == []  # refused before any modal
    view = await open_grant_modal(world, pause_id)  # the manager's modal, sent by a stranger
    response = await world.submit(STRANGER, view, grant_values("requester"))
    answer = await response.json()
    assert answer["response_action"] == "errors"  # its seal names the manager
    await world.settle()
    assert await world.app.list_grants(tenant_id=world.tenant) == []
    assert world.ledger.runs == []
