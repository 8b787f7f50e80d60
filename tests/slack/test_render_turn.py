"""A turn's message within Block Kit's limits at its worst: as many items as it lists, each with
the most it shows (long titles and reasons, many arguments, approvals lines, every answer,
"Approve and allow similar…" and "Reassign…"), every payload parsed by ``slack_sdk.models``;
pause ids only in button and menu values; settled items without buttons."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from slack_sdk.models.blocks import Block

from channels.kit.outcomes import Approved, Rejected
from channels.slack.render import (
    APPROVE_ACTION,
    MAX_MESSAGE_BLOCKS,
    REJECT_ACTION,
    RESPOND_ACTION,
    RenderedMessage,
)
from channels.slack.render_approvals import REASSIGN_ACTION
from channels.slack.render_grants import GRANT_ACTION
from channels.slack.render_turn import (
    MAX_TURN_ITEMS,
    TURN_APPROVE_ALL,
    TURN_REJECT_ALL,
    TurnItem,
    turn_message,
)
from tests.slack.checks import assert_blocks_valid, assert_no_pause_id, nodes
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
        allowed_decisions=("approve", "edit", "reject", "respond"),
        grant_scopes=("requester", "thread"),
        reassignable=True,
    )
    return TurnItem(view=view, grant=True)


def actions_of(message: RenderedMessage) -> list[list[dict[str, Any]]]:
    """Each actions block's elements, in order."""
    found: list[list[dict[str, Any]]] = []
    for block in message.blocks:
        elements = block.get("elements")
        if block["type"] == "actions" and isinstance(elements, list):
            found.append(elements)
    return found


def assert_turn_valid(message: RenderedMessage, pause_ids: set[str]) -> None:
    """Block Kit's limits (each block parsed by slack_sdk), action ids unique in the message,
    pause ids only in a button's or a menu option's value (as on a question alone)."""
    assert_blocks_valid(message.blocks, max_blocks=MAX_MESSAGE_BLOCKS)
    assert all(Block.parse(b) is not None for b in message.blocks)
    action_ids = [n["action_id"] for n in nodes(message.blocks) if "action_id" in n]
    assert len(action_ids) == len(set(action_ids))
    assert all(len(elements) <= 25 for elements in actions_of(message))
    assert not any(pause_id in message.text for pause_id in pause_ids)
    assert_no_pause_id(message.blocks, pause_ids)


def test_the_most_a_turn_message_lists_stays_within_block_kit() -> None:
    items = [worst(i) for i in range(MAX_TURN_ITEMS)]
    ids = {i.view.pause_id for i in items}

    message = turn_message(items, approve_all="k1." + "A" * 500)

    assert_turn_valid(message, ids)
    whole_turn = {TURN_APPROVE_ALL, TURN_REJECT_ALL}
    values = [b["value"] for b in buttons(message.blocks) if b["action_id"] not in whole_turn]
    assert set(values) == ids
    assert len(message.blocks) <= MAX_MESSAGE_BLOCKS
    *per_item, approve_all = actions_of(message)
    assert len(per_item) == MAX_TURN_ITEMS
    assert [(e["action_id"], e["text"]["text"]) for e in approve_all] == [
        (TURN_APPROVE_ALL, f"Approve all {MAX_TURN_ITEMS}"),
        (TURN_REJECT_ALL, f"Reject all {MAX_TURN_ITEMS}…"),
    ]
    # approve, reject, answer instead (no model: no edit), a grant, a menu: 6 at most with edit
    assert {len(elements) for elements in per_item} == {5}


def test_every_waiting_item_offers_allow_similar_and_reassign_with_its_own_value() -> None:
    items = [worst(i) for i in range(3)]

    message = turn_message(items, approve_all="sealed")

    assert_turn_valid(message, {i.view.pause_id for i in items})
    for index, (item, elements) in enumerate(zip(items, actions_of(message), strict=False), 1):
        by_id = {e["action_id"]: e for e in elements}
        approve = by_id[f"{APPROVE_ACTION}:{index}"]
        grant = by_id[f"{GRANT_ACTION}:{index}"]
        menu = by_id[f"{REASSIGN_ACTION}:{index}"]
        assert grant["text"]["text"] == "Approve and allow similar…"
        assert grant["value"] == approve["value"] == item.view.pause_id
        assert menu["type"] == "overflow"
        [option] = menu["options"]
        assert option["text"]["text"] == "Reassign…" and option["value"] == approve["value"]


def test_an_item_needing_two_approvals_offers_no_grant_and_reassigns_the_proposal_shown() -> None:
    view = replace(worst(1).view, shown_round=2, grant_scopes=())
    items = [TurnItem(view=view, grant=False), worst(2)]

    message = turn_message(items, approve_all=None)

    assert_turn_valid(message, {i.view.pause_id for i in items})
    first = {e["action_id"]: e for e in actions_of(message)[0]}
    assert f"{GRANT_ACTION}:1" not in first  # a grant is one person's approval
    assert first[f"{APPROVE_ACTION}:1"]["value"] == f"{view.pause_id}:2"
    [option] = first[f"{REASSIGN_ACTION}:1"]["options"]
    assert option["value"] == f"{view.pause_id}:2"  # the same round as its buttons
    second = {e["action_id"] for e in actions_of(message)[1]}
    assert f"{GRANT_ACTION}:2" in second and f"{REASSIGN_ACTION}:2" in second


def test_an_item_offers_no_grant_where_the_kit_offers_none_nor_reassign_where_it_cannot() -> None:
    view = replace(worst(1).view, reassignable=False)
    message = turn_message([TurnItem(view=view, grant=False), worst(2)], approve_all=None)

    first = {e["action_id"] for e in actions_of(message)[0]}
    assert first == {f"{a}:1" for a in (APPROVE_ACTION, REJECT_ACTION, RESPOND_ACTION)}


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
    settled = [
        n["action_id"]
        for b in message.blocks[:-3]
        for n in nodes(b)
        if "action_id" in n and not str(n["action_id"]).endswith(":3")
    ]
    assert settled == []  # no grant, no menu, no answer on a settled item
    assert "1 of 3 requests still wait" in message.text
