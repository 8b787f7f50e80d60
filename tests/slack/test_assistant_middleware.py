"""Bolt's assistant middleware sees every request; ours passes anything but an event straight on
(its listeners match only events), so a click's ack does not wait for its matchers."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from slack_bolt.listener.async_listener import AsyncListener
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from channels.slack.listeners.assistant import EventsOnlyAssistant


def _assistant() -> tuple[EventsOnlyAssistant, list[str]]:
    """The middleware with a listener for each kind, each of whose matchers is recorded."""
    assistant = EventsOnlyAssistant()
    tried: list[str] = []

    async def nothing() -> None:
        return None

    assistant.thread_started(nothing)
    assistant.thread_context_changed(nothing)
    assistant.user_message(nothing)
    assistant.bot_message(nothing)
    for kind, listeners in (
        ("started", assistant._thread_started_listeners),
        ("context", assistant._thread_context_changed_listeners),
        ("user", assistant._user_message_listeners),
        ("bot", assistant._bot_message_listeners),
    ):
        for listener in listeners or ():
            _record(listener, kind, tried)
    return assistant, tried


def _record(listener: AsyncListener, kind: str, tried: list[str]) -> None:
    matches = listener.async_matches

    async def recorded(*, req: AsyncBoltRequest, resp: BoltResponse) -> bool:
        tried.append(kind)
        return await matches(req=req, resp=resp)

    listener.async_matches = recorded  # type: ignore[method-assign]


async def _through(assistant: EventsOnlyAssistant, request: AsyncBoltRequest) -> bool:
    went_on: list[bool] = []

    async def next_() -> BoltResponse:
        went_on.append(True)
        return BoltResponse(status=200)

    await assistant.async_process(req=request, resp=BoltResponse(status=200), next=next_)
    return bool(went_on)


def _click() -> AsyncBoltRequest:
    payload: dict[str, Any] = {
        "type": "block_actions",
        "team": {"id": "T0TEAM"},
        "user": {"id": "U0MANAGER", "team_id": "T0TEAM"},
        "actions": [{"action_id": "countersign_approve", "value": "x", "type": "button"}],
    }
    return AsyncBoltRequest(body=urlencode({"payload": json.dumps(payload)}))


def _channel_message() -> AsyncBoltRequest:
    body = {
        "type": "event_callback",
        "team_id": "T0TEAM",
        "event": {"type": "message", "channel": "C0DESK", "user": "U0X", "text": "hi", "ts": "1.2"},
    }
    request = AsyncBoltRequest(body=json.dumps(body))
    request.context["listener_runner"] = None  # Bolt's; used only by a listener that matched
    return request


async def test_a_click_goes_on_without_the_assistants_matchers() -> None:
    assistant, tried = _assistant()
    assert await _through(assistant, _click())
    assert tried == []


async def test_an_event_is_still_matched_by_the_assistants_listeners() -> None:
    assistant, tried = _assistant()
    assert await _through(assistant, _channel_message())  # not in an assistant thread: on
    assert set(tried) == {"started", "context", "user", "bot"}
