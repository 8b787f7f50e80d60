"""A request is answered at its listener's ack (``channels.slack.ack_runner``), with Bolt's
semantics otherwise: a failure before the ack is a 500, after it only logged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import pytest
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.request.async_request import AsyncBoltRequest

from channels.slack.ack_runner import AckedAtOnce

Listener = Callable[..., Awaitable[None]]


def _app(listener: Listener) -> AsyncApp:
    async def authorize(**_: Any) -> AuthorizeResult:
        return AuthorizeResult(enterprise_id=None, team_id="T1", bot_token="xoxb-test")

    bolt = AsyncApp(
        signing_secret="secret", request_verification_enabled=False, authorize=authorize
    )
    AckedAtOnce.replacing(bolt)
    bolt.action("press")(listener)
    return bolt


def _click() -> AsyncBoltRequest:
    payload = {
        "type": "block_actions",
        "team": {"id": "T1"},
        "user": {"id": "U1", "team_id": "T1"},
        "actions": [{"type": "button", "action_id": "press", "value": "v"}],
    }
    return AsyncBoltRequest(
        body=f"payload={quote(json.dumps(payload))}",
        headers={"content-type": ["application/x-www-form-urlencoded"]},
    )


async def test_a_request_is_answered_at_its_ack_without_looking_every_10_ms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bolt's own runner slept 10 ms at a time until the listener had acked: each 200 came
    up to 10 ms late, and 50 requests waiting woke the loop 5,000 times a second."""
    looks: list[float] = []
    sleep = asyncio.sleep

    async def counted(delay: float, *args: Any) -> Any:
        looks.append(delay)
        return await sleep(delay, *args)

    monkeypatch.setattr(asyncio, "sleep", counted)
    go_on = asyncio.Event()
    after: list[str] = []

    async def press(ack: AsyncAck) -> None:
        for _ in range(3):  # the recording's store calls
            await sleep(0)
        await ack()
        await go_on.wait()  # what follows the ack: the request does not wait for it
        after.append("went on")

    bolt = _app(press)
    response = await bolt.async_dispatch(_click())
    assert response.status == 200
    assert looks == []
    assert after == []
    go_on.set()
    await sleep(0)
    assert after == ["went on"]


async def test_a_listener_failing_before_its_ack_is_answered_500() -> None:
    async def press(ack: AsyncAck) -> None:
        await asyncio.sleep(0)
        raise RuntimeError("the database went away")

    response = await _app(press).async_dispatch(_click())
    assert response.status == 500


async def test_a_listener_failing_after_its_ack_leaves_the_ack_standing() -> None:
    failed = asyncio.Event()

    async def press(ack: AsyncAck) -> None:
        await ack()
        await asyncio.sleep(0)
        failed.set()
        raise RuntimeError("after the ack")

    response = await _app(press).async_dispatch(_click())
    assert response.status == 200
    await failed.wait()
