"""A turn message's "Reject all…" (issue 29, gap G1), as signed requests against the Web API
stub: it opens the batch reject modal (one reason, required) over the items still waiting that
the message showed; each item records that reason (its own record, audit entry and outcome, the
model reads it), one answered elsewhere meanwhile is skipped, a blank reason keeps the modal
open, a retried submission rejects each once, and a value of another message opens nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from slack_sdk.models.views import View

from bot import PauseStatus
from bot.core.dtos import ToolCallApprovalDecision
from channels.kit.texts import BATCH_REASON_REQUIRED, batch_skipped
from channels.slack.render import BATCH_REJECT_MODAL
from channels.slack.render_turn import TURN_REJECT_ALL
from channels.slack.turn_answers import NOT_THIS_MESSAGE
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_modals import reason
from tests.slack.test_turn_messages import approve_ids, ask_turn, latest, ran, told


def reject_all(blocks: list[dict[str, Any]]) -> Mapping[str, Any]:
    [button] = [b for b in buttons(blocks) if b["action_id"] == TURN_REJECT_ALL]
    return button


async def _opened(world: SlackWorld, ts: str, value: str) -> dict[str, Any]:
    """Click "Reject all…" on message ``ts``: the modal it opened, read back by slack_sdk."""
    response = await world.click(MANAGER, TURN_REJECT_ALL, value, message_ts=ts)
    assert response.status == 200
    await world.settle()
    view = world.stub.of("views.open")[-1].view()
    assert View(**view) is not None
    assert view["callback_id"] == BATCH_REJECT_MODAL
    return view


async def test_reject_all_asks_one_reason_each_waiting_item_records_and_the_model_reads(
    world: SlackWorld,
) -> None:
    ts, ids = await ask_turn(world)
    button = reject_all(latest(world, ts))
    assert button["text"]["text"] == "Reject all 3…"
    value = str(button["value"])
    assert all(pause_id not in value for pause_id in ids)  # sealed
    view = await _opened(world, ts, value)
    assert "3 questions" in all_text(view)
    assert all(pause_id not in json.dumps(view) for pause_id in ids)

    blank = await world.submit(MANAGER, view, reason("  "))  # required: the modal stays open
    assert json.loads(await blank.text())["errors"]["reason"] == BATCH_REASON_REQUIRED
    for pause_id in ids:
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None and pause.status is PauseStatus.PENDING

    # meanwhile, the first is approved elsewhere (another surface: the App's answer path)
    await world.app.resume(ids[0], decision={"approved": True}, tenant_id=TEAM, answered_by=MANAGER)
    await world.settle()
    assert ran(world) == ["0"]

    response = await world.submit(MANAGER, view, reason("duplicate orders"))
    assert response.status == 200 and await response.text() == ""
    await world.settle()

    rejected = ToolCallApprovalDecision(approved=False, reason="duplicate orders")
    for pause_id in ids[1:]:
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None and pause.status is not PauseStatus.PENDING
        assert pause.decision == rejected
    first = await world.app.find_pause(ids[0], tenant_id=TEAM)
    assert first is not None and first.decision is not None and first.decision.approved
    assert ran(world) == ["0"]  # the rejected ones never run
    audit = await world.app.list_answered(tenant_id=TEAM, responder=MANAGER)
    assert sorted(e.pause_id for e in audit) == sorted(ids)  # each item its own entry
    [said] = [t for t in told(world) if "Rejected." in t]
    assert said.count("Rejected.") == 2 and said.count(batch_skipped("Approved by you.")) == 1
    blocks = latest(world, ts)
    assert approve_ids(blocks) == []
    assert all_text(blocks).count(f"Rejected* by <@{MANAGER}>\n>duplicate orders") == 2
    read = [" ".join(str(m.content) for m in call.messages) for call in world.llm.calls]
    assert any(r.count("duplicate orders") == 2 for r in read)  # the model reads each reason

    again = await world.submit(MANAGER, view, reason("another reason"))  # a retried submission
    assert again.status == 200
    await world.settle()
    for pause_id in ids[1:]:
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None and pause.decision == rejected  # rejected once
    assert told(world)[-1].count("Already answered elsewhere, skipped") == 3
    assert len(await world.app.list_answered(tenant_id=TEAM, responder=MANAGER)) == 3
    assert_sent_valid(world.stub.calls, set(ids))


async def test_a_reject_all_of_another_message_or_forged_opens_nothing(
    world: SlackWorld,
) -> None:
    ts, ids = await ask_turn(world)
    value = str(reject_all(latest(world, ts))["value"])
    for sent, message_ts in ((value, "1.0"), ("k1.forged", ts)):
        await world.click(MANAGER, TURN_REJECT_ALL, sent, message_ts=message_ts)
        await world.settle()
        assert told(world)[-1] == NOT_THIS_MESSAGE
    assert world.stub.of("views.open") == []
    assert approve_ids(latest(world, ts)) == ids  # all still waiting
