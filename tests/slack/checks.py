"""Checks on everything the bot sent to the stub: Block Kit limits and no pause id in text."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from channels.slack.render import RenderedMessage
from tests.slack.stub import Call

MESSAGE_METHODS = ("chat.postMessage", "chat.update", "chat.postEphemeral", "response_url")
VIEW_METHODS = ("views.open", "views.publish")


def blocks_of(message: RenderedMessage) -> list[dict[str, Any]]:
    """The blocks, typed for indexing in assertions (JSON as Slack reads it)."""
    return message.blocks


def as_json(view: dict[str, object]) -> dict[str, Any]:
    """A rendered view or modal, typed for indexing in assertions."""
    return view


def nodes(obj: object) -> Iterator[Mapping[str, Any]]:
    if isinstance(obj, Mapping):
        yield obj
        for value in obj.values():
            yield from nodes(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from nodes(item)


def strings(obj: object) -> Iterator[tuple[Mapping[str, Any], str, str]]:
    for node in nodes(obj):
        for key, value in node.items():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str):
                    yield node, key, item


def buttons(blocks: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    return [node for node in nodes(blocks) if node.get("type") == "button"]


def all_text(tree: object) -> str:
    """Every string but button values and modal metadata."""
    return "\n".join(
        value for _, key, value in strings(tree) if key not in ("value", "private_metadata")
    )


def assert_blocks_valid(blocks: list[dict[str, Any]], *, max_blocks: int) -> None:
    """slack_sdk re-validates each block; plus what it does not check."""
    assert 0 < len(blocks) <= max_blocks
    for block in blocks:
        parsed = Block.parse(block)
        assert parsed is not None
        assert parsed.to_dict() == block
        if block["type"] == "section":
            assert len(block.get("text", {}).get("text", "")) <= 3000
            assert len(block.get("fields", [])) <= 10
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= 150
    keys = [
        (block.get("block_id"), node["action_id"])
        for block in blocks
        for node in nodes(block)
        if "action_id" in node
    ]
    assert len(keys) == len(set(keys)), keys
    for button in buttons(blocks):
        assert len(button["value"]) <= 2000


def assert_sent_valid(calls: list[Call], pause_ids: set[str]) -> None:
    """Every message and view sent: valid Block Kit, a fallback text, pause ids only in buttons."""
    for call in calls:
        if call.method in MESSAGE_METHODS:
            text = call.payload.get("text")
            assert isinstance(text, str) and text, call
            blocks = call.blocks()
            if blocks:
                assert_blocks_valid(blocks, max_blocks=50)
                action_ids = [n["action_id"] for n in nodes(blocks) if "action_id" in n]
                assert len(action_ids) == len(set(action_ids))
            assert_no_pause_id(call.payload, pause_ids)
        elif call.method in VIEW_METHODS:
            view = call.view()
            assert View(**view).to_dict() == view
            assert_blocks_valid(view["blocks"], max_blocks=100)
            assert len(view.get("private_metadata", "")) <= 3000
            assert_no_pause_id(view, pause_ids)


def assert_no_pause_id(tree: object, pause_ids: set[str]) -> None:
    """A pause id may be a button's value (and inside signed modal metadata), nothing else."""
    for node, key, value in strings(tree):
        if key in ("private_metadata", "blocks", "view"):
            continue
        for pause_id in pause_ids:
            if pause_id in value:  # a button's value, or a menu option's (Reassign…)
                option = "type" not in node and "text" in node
                assert key == "value" and (node.get("type") == "button" or option), (key, value)


def payload_text(call: Call) -> str:
    return json.dumps(call.payload, ensure_ascii=False)
