"""A turn message's item rejected on its own (issue 29 audit), as signed requests against the
Web API stub: each item's own Reject opens the modal, its one reason is recorded on that item
only, the message shows it rejected, and "Approve all" then approves the rest, each tool once
("Reject all…" over the whole turn: ``test_turn_reject_all``)."""

from __future__ import annotations

from bot import PauseStatus
from channels.slack.render import REJECT_ACTION
from channels.slack.render_turn import TURN_APPROVE_ALL
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_modals import reason
from tests.slack.test_turn_messages import approve_all, approve_ids, ask_turn, latest, ran


async def test_a_turn_item_rejected_with_its_reason_then_approve_all_approves_the_rest(
    world: SlackWorld,
) -> None:
    ts, ids = await ask_turn(world)
    blocks = latest(world, ts)
    [reject] = [
        b for b in buttons(blocks)
        if str(b["action_id"]).startswith(REJECT_ACTION) and b["value"] == ids[0]
    ]  # fmt: skip
    response = await world.click(MANAGER, str(reject["action_id"]), ids[0], message_ts=ts)
    assert response.status == 200
    await world.settle()
    [opened] = world.stub.of("views.open")
    submitted = await world.submit(MANAGER, opened.view(), reason("duplicate order"))
    assert submitted.status == 200
    await world.settle()

    rejected = await world.app.find_pause(ids[0], tenant_id=TEAM)
    assert rejected is not None and rejected.status is not PauseStatus.PENDING
    assert rejected.decision is not None and rejected.decision.approved is False
    assert rejected.decision.reason == "duplicate order"
    blocks = latest(world, ts)
    assert approve_ids(blocks) == ids[1:]
    assert f"Rejected* by <@{MANAGER}>" in all_text(blocks)
    button = approve_all(blocks)
    assert button is not None and button["text"]["text"] == "Approve all 2"

    await world.click(MANAGER, TURN_APPROVE_ALL, str(button["value"]), message_ts=ts)
    await world.settle()
    assert ran(world) == ["1", "2"]  # the rejected one never runs
    for pause_id in ids[1:]:
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None and pause.decision is not None and pause.decision.approved
    assert_sent_valid(world.stub.calls, set(ids))
