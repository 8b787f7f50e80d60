"""Handing a question on in Slack, as signed requests against the Web API stub: "Reassign…" in
the message's menu opens a modal; the person chosen is told in a direct message, the message
says who it was handed to, and they may answer it (the channel's approvers notwithstanding);
the requester is never handed their own request; a standing delegation lets its delegate
answer until its end."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bot import PauseStatus
from channels.slack.render import APPROVE_ACTION
from channels.slack.render_approvals import (
    REASSIGN_ACTION,
    REASSIGN_BLOCK,
    REASSIGN_MODAL,
    REASSIGN_USER,
)
from tests.slack.checks import all_text, assert_sent_valid, nodes
from tests.slack.conftest import SlackWorld, interactive_body
from tests.slack.office import APPROVALS, MANAGER, OWNER, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund


async def choose_reassign(world: SlackWorld, user: str, pause_id: str) -> dict[str, Any]:
    """``user`` picks "Reassign…" in the message's menu; the modal that opened."""
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "acme"},
        "user": {"id": user, "team_id": TEAM},
        "api_app_id": "A0APP",
        "token": "legacy",
        "container": {"type": "message", "message_ts": "1.1", "channel_id": APPROVALS},
        "channel": {"id": APPROVALS, "name": "approvals"},
        "message": {"ts": "1.1", "type": "message"},
        "trigger_id": "trigger-reassign",
        "response_url": world.stub.response_url(),
        "actions": [
            {
                "type": "overflow",
                "action_id": REASSIGN_ACTION,
                "block_id": "countersign_handing",
                "selected_option": {
                    "text": {"type": "plain_text", "text": "Reassign…"},
                    "value": pause_id,
                },
                "action_ts": "1700000002.000000",
            }
        ],
    }
    response = await world.post(interactive_body(payload))
    assert response.status == 200
    await world.settle()
    opened = world.stub.of("views.open")[-1]
    return opened.view()


def chosen(user: str) -> dict[str, Any]:
    return {REASSIGN_BLOCK: {REASSIGN_USER: {"type": "users_select", "selected_user": user}}}


async def test_reassign_hands_the_question_to_someone_who_is_told_and_may_answer(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)
    [posted] = world.stub.of("chat.postMessage")
    menus = [n for n in nodes(posted.blocks()) if n.get("action_id") == REASSIGN_ACTION]
    assert [m["type"] for m in menus] == ["overflow"]

    view = await choose_reassign(world, MANAGER, pause_id)
    assert view["callback_id"] == REASSIGN_MODAL and pause_id not in all_text(view)
    refused = await world.submit(MANAGER, view, chosen(OWNER))  # the requester: never
    assert refused.status == 200
    said = await refused.json()
    assert (
        said["response_action"] == "errors" and "asked for this" in said["errors"][REASSIGN_BLOCK]
    )

    done = await world.submit(MANAGER, view, chosen(STRANGER))
    assert done.status == 200 and await done.text() == ""
    await world.settle()
    dm = [c for c in world.stub.of("chat.postMessage") if c.payload["channel"] == STRANGER]
    assert len(dm) == 1 and f"<@{MANAGER}> handed you a question" in dm[0].payload["text"]
    update = world.stub.of("chat.update")[-1]
    assert f"Handed to <@{STRANGER}> by <@{MANAGER}>" in all_text(update.blocks())

    await world.click(STRANGER, APPROVE_ACTION, pause_id)  # not an approver: handed to them
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is not PauseStatus.PENDING
    assert [(h.by, h.to) for h in pause.handovers] == [(MANAGER, STRANGER)]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_standing_delegation_lets_its_delegate_click_until_its_end(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)
    await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=timedelta(hours=1)
    )
    await world.clock.advance(timedelta(hours=2))  # ended: refused as before
    await world.click(STRANGER, APPROVE_ACTION, pause_id)
    await world.settle()
    assert world.ledger.runs == []
    assert world.stub.of("chat.postEphemeral")[-1].payload["user"] == STRANGER

    await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=timedelta(hours=1)
    )
    await world.click(STRANGER, APPROVE_ACTION, pause_id)
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None
    assert [(h.by, h.to, h.kind) for h in pause.handovers] == [(MANAGER, STRANGER, "delegation")]
