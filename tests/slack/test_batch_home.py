"""Batches on the App Home, as signed requests against the Web API stub: the list's questions
have their checkboxes and the batch buttons; "Approve all", "Approve selected" and "Reject
selected…" clicked on the Home answer each question once, and the Home is republished with a
line per question of what happened."""

from __future__ import annotations

from typing import Any

from bot import PauseStatus, ToolCallApprovalDecision
from channels.slack.render import APPROVE_ALL_ACTION
from tests.slack.batch_picks import ask_refunds, batch_button, checkboxes, ticked
from tests.slack.checks import all_text, assert_sent_valid
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_lists import home_opened, is_empty_list
from tests.slack.test_modals import reason


def home_blocks(world: SlackWorld) -> list[dict[str, Any]]:
    published = world.stub.of("views.publish")[-1]
    assert published.payload["user_id"] == MANAGER
    blocks: list[dict[str, Any]] = published.view()["blocks"]
    return blocks


async def test_approve_all_on_the_home_then_its_lines_on_the_republished_home(
    world: SlackWorld,
) -> None:
    await home_opened(world, MANAGER)
    ids = await ask_refunds(world, 3)
    await world.settle()
    blocks = home_blocks(world)
    assert sorted(checkboxes(blocks)) == sorted(ids)
    value = str(batch_button(blocks, "batch")["value"])

    response = await world.click(MANAGER, APPROVE_ALL_ACTION, value, home=True)
    assert response.status == 200
    await world.settle()

    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ["0", "1", "2"]
    assert len(world.stub.of("chat.update")) == 3  # each question's message, once
    shown = all_text(home_blocks(world))
    assert "Your last batch" in shown and shown.count("Approved.") == 3
    assert is_empty_list(home_blocks(world)[1:])
    assert_sent_valid(world.stub.calls, set(ids))


async def test_approve_selected_and_reject_selected_on_the_home(world: SlackWorld) -> None:
    await home_opened(world, MANAGER)
    ids = await ask_refunds(world, 3)
    await world.settle()
    blocks = home_blocks(world)

    approve = batch_button(blocks, "batch-selected")["action_id"]
    await world.click(MANAGER, approve, "selected", home=True, state=ticked(blocks, ids[:1]))
    await world.settle()
    assert [args["order_id"] for _, args in world.ledger.runs] == ["0"]
    shown = all_text(home_blocks(world))
    assert shown.count("Approved.") == 1
    assert sorted(checkboxes(home_blocks(world))) == sorted(ids[1:])

    blocks = home_blocks(world)
    reject = batch_button(blocks, "batch-reject")["action_id"]
    await world.click(MANAGER, reject, "selected", home=True, state=ticked(blocks, ids[1:]))
    await world.settle()
    view = world.stub.of("views.open")[-1].view()
    await world.submit(MANAGER, view, reason("duplicate"))
    await world.settle()

    assert [args["order_id"] for _, args in world.ledger.runs] == ["0"]
    for pause_id in ids[1:]:
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None and pause.status is not PauseStatus.PENDING
        assert pause.decision == ToolCallApprovalDecision(approved=False, reason="duplicate")
    shown = all_text(home_blocks(world))
    assert shown.count("Rejected.") == 2 and "Approved." not in shown  # the last batch's
    assert len(world.stub.of("chat.update")) == 3
    assert_sent_valid(world.stub.calls, set(ids))
