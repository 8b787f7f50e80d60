"""Ticking questions on a Slack list, as Slack sends it: the ``state.values`` of the ticked
checkboxes that come with a batch button's click."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bot import ExecutionStatus
from bot.testing import call_tool
from channels.slack.button_values import read_answer_value
from channels.slack.render import APPROVE_ACTION, action_kind
from tests.slack.checks import buttons, nodes
from tests.slack.conftest import SlackWorld
from tests.slack.office import RefundCardTool


def checkboxes(blocks: list[dict[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Each listed question's checkbox, by its pause id (the Approve button after it)."""
    found: dict[str, Mapping[str, Any]] = {}
    box: Mapping[str, Any] | None = None
    for block in blocks:
        accessory = block.get("accessory")
        if isinstance(accessory, Mapping) and accessory.get("type") == "checkboxes":
            box = accessory
        for button in buttons([block]):
            if str(button["action_id"]).startswith(f"{APPROVE_ACTION}:") and box is not None:
                found[str(button["value"])] = box
                box = None
    return found


def ticked(blocks: list[dict[str, Any]], pause_ids: Iterable[str]) -> dict[str, Any]:
    """The ``state.values`` Slack sends once ``pause_ids``' checkboxes are ticked (Slack
    gives blocks without an id one of its own)."""
    boxes = checkboxes(blocks)
    state: dict[str, Any] = {}
    for index, (pause_id, box) in enumerate(boxes.items()):
        chosen = list(box["options"]) if pause_id in set(pause_ids) else []
        state[f"slack-{index}"] = {
            box["action_id"]: {"type": "checkboxes", "selected_options": chosen}
        }
    return state


def batch_button(blocks: list[dict[str, Any]], kind: str) -> Mapping[str, Any]:
    [button] = [b for b in buttons(blocks) if action_kind(str(b["action_id"])) == kind]
    return button


def options(tree: object) -> list[Mapping[str, Any]]:
    return [n for n in nodes(tree) if n.get("type") == "checkboxes"]


async def ask_each(
    world: SlackWorld, calls: list[Any], *, owner: str | None = None, final: str | None = None
) -> list[str]:
    """Each of ``calls`` asked by a request of its own (so each its own message: one model
    turn's questions share one, ``tests/slack/test_turn_messages.py``); their pause ids in
    order. Each run's model then says ``final`` (None: nothing scripted after)."""
    before = len(world.stub.of("chat.postMessage"))
    for call in calls:
        world.llm.then_return(call)
        if owner is None:
            result = await world.execute("please")
        else:
            result = await world.execute("please", owner=owner)
        assert result.status is ExecutionStatus.PAUSED
    if final is not None:
        world.llm.then_return(*[final] * len(calls))
    posted = world.stub.of("chat.postMessage")[before:]
    return [read_answer_value(str(buttons(c.blocks())[0]["value"])).pause_id for c in posted]


async def ask_refunds(world: SlackWorld, count: int, *, final: str = "done") -> list[str]:
    """``count`` refunds, each asked by a request of its own; their pause ids by order
    (``order_id`` i at index i)."""
    calls = [
        call_tool(RefundCardTool, {"order_id": str(i), "amount": 1.0 + i}) for i in range(count)
    ]
    return await ask_each(world, calls, final=final)
