"""Reading Slack payloads at the edge: small typed accessors over the dicts Bolt hands us.

Payloads are outside data: every accessor tolerates a missing or mistyped field and answers
``None`` rather than raising, so a strange payload is ignored, never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.feedback import Audience

TENANT_KEY: Final = "countersign_tenant"
"""Where the tenant middleware puts the request's tenant in Bolt's context."""

SlackPayload = Mapping[str, Any]


def text_at(payload: object, *path: str) -> str | None:
    """The non-empty string at ``path`` in nested dicts, else ``None``."""
    node = payload
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node if isinstance(node, str) and node else None


def flag_at(payload: object, *path: str) -> bool:
    node = payload
    for key in path:
        if not isinstance(node, Mapping):
            return False
        node = node.get(key)
    return node is True


def tenant_of(context: AsyncBoltContext) -> str | None:
    tenant = context.get(TENANT_KEY)
    return tenant if isinstance(tenant, str) and tenant else None


def interaction_audience(body: SlackPayload, user: str) -> Audience:
    """Where to tell the user of a click: its message's channel, its ephemeral list, or a DM."""
    container = body.get("container")
    if text_at(container, "type") == "view":  # the App Home or a modal
        return Audience(user=user)
    channel = text_at(body, "channel", "id") or text_at(container, "channel_id")
    thread_ts = text_at(container, "thread_ts") or text_at(body, "message", "thread_ts")
    response_url = text_at(body, "response_url") if flag_at(container, "is_ephemeral") else None
    return Audience(user=user, channel=channel, thread_ts=thread_ts, response_url=response_url)


_MENTION: Final = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


def without_mention(text: str, bot_user_id: str | None) -> str:
    """``text`` without mentions of the bot, whitespace collapsed."""

    def drop(match: re.Match[str]) -> str:
        return "" if match.group(1) == bot_user_id else match.group(0)

    return " ".join(_MENTION.sub(drop, text).split())


def state_values(view: object) -> dict[str, dict[str, dict[str, object]]]:
    """A view submission's ``state.values``, keeping only well-formed entries."""
    values = view.get("state", {}).get("values") if isinstance(view, Mapping) else None
    if not isinstance(values, Mapping):
        return {}
    result: dict[str, dict[str, dict[str, object]]] = {}
    for block_id, actions in values.items():
        if isinstance(block_id, str) and isinstance(actions, Mapping):
            result[block_id] = {
                action_id: dict(state)
                for action_id, state in actions.items()
                if isinstance(action_id, str) and isinstance(state, Mapping)
            }
    return result
