"""Reading Slack payloads at the edge: their shapes checked once, then small typed accessors.

Payloads are outside data, even signed ones. :func:`malformed` checks, before Bolt's own
middlewares and matchers read anything, that each field a listener or Bolt reads has the type
Slack sends (pydantic models, strict, extra fields allowed): Bolt raised on e.g. ``actions``
that is not a list of objects or an ``event`` that is not an object, and answered 500.
:func:`malformed_context` checks what Bolt itself copied out of the payload into its context
(the team, user and channel ids), wherever in the payload it found them. Past
that, every accessor still tolerates a missing or mistyped field and answers ``None`` rather
than raising, so a strange payload is ignored, never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.feedback import Audience

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
    state = view.get("state") if isinstance(view, Mapping) else None
    values = state.get("values") if isinstance(state, Mapping) else None
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


# ------------------------------------------------------------------------------- shapes


class _Shape(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


class _Ref(_Shape):
    """``user``, ``team``, ``channel`` of an interaction: objects with a string ``id``."""

    id: str | None = None


class _Container(_Shape):
    type: str | None = None
    channel_id: str | None = None
    thread_ts: str | None = None
    is_ephemeral: bool | None = None


class _Message(_Shape):
    thread_ts: str | None = None


class _Action(_Shape):
    action_id: str
    block_id: str | None = None
    value: str | None = None


class _Interaction(_Shape):
    user: _Ref
    team: _Ref | None = None
    channel: _Ref | None = None
    response_url: str | None = None
    trigger_id: str | None = None


class _BlockActions(_Interaction):
    type: Literal["block_actions"]
    container: _Container | None = None
    message: _Message | None = None
    actions: list[_Action] = Field(min_length=1)


class _Option(_Shape):
    value: str | None = None


class _Input(_Shape):
    """One input's state in a submitted view: what the listeners read of it (a text input's
    ``value``, a select's ``selected_option``), else a number or a list was read as empty."""

    value: str | None = None
    selected_option: _Option | None = None


class _State(_Shape):
    values: dict[str, dict[str, _Input]] = Field(default_factory=dict)


class _View(_Shape):
    type: str  # Slack always sends it ("modal"); Bolt reads it of a view it has no listener for
    callback_id: str | None = None
    private_metadata: str | None = None
    state: _State | None = None


class _ViewPayload(_Interaction):
    type: Literal["view_submission", "view_closed"]
    view: _View


class _EventCallback(_Shape):
    type: Literal["event_callback"]
    event_id: str | None = None
    team_id: str | None = None
    event: dict[str, Any]


class _ListenedEvent(_Shape):
    """The events our listeners read (``message``, ``app_mention``, ``app_home_opened``)."""

    type: str
    user: str | None = None
    channel: str | None = None
    channel_type: str | None = None
    ts: str | None = None
    thread_ts: str | None = None
    text: str | None = None
    tab: str | None = None


class _OtherEvent(_Shape):
    type: str


_PAYLOADS: Final[Mapping[str, type[_Shape]]] = {
    "block_actions": _BlockActions,
    "view_submission": _ViewPayload,
    "view_closed": _ViewPayload,
    "event_callback": _EventCallback,
}
_LISTENED_EVENTS: Final = frozenset({"message", "app_mention", "app_home_opened"})
_OBJECTS_EVERYWHERE: Final = ("event", "view")
"""Keys Bolt reads as objects in a payload of any type (``event.bot_id`` for every request,
``view.type`` when it logs a request no listener takes)."""


def malformed(body: object) -> str | None:
    """Why ``body`` is not a payload of the shape Slack sends, or ``None`` when it is.

    Only the payload types we handle are checked (the others reach no listener), and of
    them only the fields that we or Bolt read; the reason names the first bad field.
    """
    if not isinstance(body, Mapping):
        return "the payload is not an object"
    for key in _OBJECTS_EVERYWHERE:
        if key in body and not isinstance(body[key], Mapping):
            return f"{key}: not an object"
    kind = body.get("type")
    shape = _PAYLOADS.get(kind) if isinstance(kind, str) else None
    try:
        if shape is not None:
            shape.model_validate(body)
    except ValidationError as error:
        return _first_error(error)
    if shape is _EventCallback:
        event = body["event"]
        listened = isinstance(event.get("type"), str) and event["type"] in _LISTENED_EVENTS
        event_shape = _ListenedEvent if listened else _OtherEvent  # _OtherEvent: a string type
        try:
            event_shape.model_validate(event)
        except ValidationError as error:
            return _first_error(error, "event")
    return None


_CONTEXT_TEXTS: Final = (
    "enterprise_id",
    "team_id",
    "user_id",
    "actor_enterprise_id",
    "actor_team_id",
    "actor_user_id",
    "channel_id",
    "thread_ts",
    "response_url",
    "function_execution_id",
    "function_bot_access_token",
)
"""The ids Bolt copies into its context from wherever they are in a payload (``team``,
``team_id``, ``authorizations[0]``, ``event``, ``user``, ``view``...), as it found them."""


def malformed_context(context: Mapping[str, object]) -> str | None:
    """Why the ids Bolt read from a payload into ``context`` are not all strings, if they are
    not: its per-request Web API client sends ``team_id`` with every call (a list or an object
    there raised in aiohttp: a 500), and its matchers and middlewares compare the others."""
    for key in _CONTEXT_TEXTS:
        value = context.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key}: not a string"
    return None


def _first_error(error: ValidationError, *prefix: str) -> str:
    """The first bad field's path and what is wrong (never its value: it may be a pause id)."""
    first = error.errors()[0]
    where = ".".join([*prefix, *(str(part) for part in first["loc"])]) or "the payload"
    return f"{where}: {first['msg']}"
