"""A turn's message within Block Kit's limits at its worst: as many items as it lists, each with
the most it shows (long titles and reasons, many arguments, approvals lines), every payload
parsed by ``slack_sdk.models``; pause ids only in button values; settled items without buttons."""

from __future__ import annotations

from datetime import UTC, datetime

from channels.kit.outcomes import Approved, Rejected
from channels.slack.render import APPROVE_ACTION
from channels.slack.render_turn import MAX_TURN_ITEMS, TURN_APPROVE_ALL, TurnItem, turn_message
from tests.slack.test_render import (
    approval,
    assert_message_valid,
    buttons,
)


def worst(index: int) -> TurnItem:
    arguments = {f"field_{n}": "x" * 3000 for n in range(14)}
    view = approval(
        pause_id=f"{index:032x}",
        tool_description="Refunds a card payment. " * 200,
        description="The model says: " + "why " * 1000,
        arguments=arguments,
        input_model=None,
        request="please " * 500,
        stated_reason="because " * 500,
        approvals=tuple(f"<@U{n}> approved" for n in range(12)),
        expires_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    return TurnItem(view=view)


def test_the_most_a_turn_message_lists_stays_within_block_kit() -> None:
    items = [worst(i) for i in range(MAX_TURN_ITEMS)]
    ids = {i.view.pause_id for i in items}

    message = turn_message(items, approve_all="k1." + "A" * 500)

    assert_message_valid(message, ids)
    values = [b["value"] for b in buttons(message.blocks) if b["action_id"] != TURN_APPROVE_ALL]
    assert set(values) == ids


def test_settled_items_show_their_outcome_and_lose_their_buttons() -> None:
    items = [
        TurnItem(view=approval(pause_id="a" * 32), outcome=Approved(by="U0MANAGER")),
        TurnItem(view=approval(pause_id="b" * 32), outcome=Rejected(by="U0MANAGER", reason="no")),
        TurnItem(view=approval(pause_id="c" * 32)),
    ]

    message = turn_message(items, approve_all="sealed")

    assert_message_valid(message, {"a" * 32, "b" * 32, "c" * 32})
    approves = [
        b["value"] for b in buttons(message.blocks) if b["action_id"].startswith(APPROVE_ACTION)
    ]
    assert approves == ["c" * 32]
    assert all(b["action_id"] != TURN_APPROVE_ALL for b in buttons(message.blocks))  # one left
    assert "1 of 3 requests still wait" in message.text
