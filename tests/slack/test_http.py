"""The HTTP face: signatures, size cap, malformed bodies, health, rate limits, no leaked ids."""

from __future__ import annotations

import json
import logging
import time

import pytest

from bot import PauseStatus
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import assert_sent_valid
from tests.slack.conftest import SlackWorld, interactive_body
from tests.slack.office import MANAGER, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund


def click_body(pause_id: str, user: str = MANAGER) -> str:
    return interactive_body(
        {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": user, "team_id": TEAM},
            "container": {"type": "message", "channel_id": "C0APPROVALS", "is_ephemeral": False},
            "channel": {"id": "C0APPROVALS"},
            "trigger_id": "t",
            "response_url": "http://127.0.0.1:9/none",
            "actions": [{"type": "button", "action_id": APPROVE_ACTION, "value": pause_id}],
        }
    )


async def assert_still_waiting(world: SlackWorld, pause_id: str) -> None:
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert world.ledger.runs == []


@pytest.mark.parametrize(
    "how",
    ["wrong secret", "stale timestamp", "missing signature", "signature of another body"],
)
async def test_a_badly_signed_click_is_401_and_resumes_nothing(world: SlackWorld, how: str) -> None:
    pause_id = await ask_refund(world)
    body = click_body(pause_id)

    match how:
        case "wrong secret":
            response = await world.post(body, secret="not-the-secret")
        case "stale timestamp":
            response = await world.post(body, timestamp=int(time.time()) - 6 * 60)
        case "missing signature":
            response = await world.post(body, sign=False)
        case _:
            from tests.slack.conftest import signed_headers

            headers = signed_headers(click_body(pause_id, user=STRANGER))
            response = await world.post(body, sign=False, headers=headers)

    assert response.status == 401
    await assert_still_waiting(world, pause_id)


async def test_an_oversized_body_is_413(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    body = click_body(pause_id) + "&padding=" + "x" * (1024 * 1024 + 1)

    response = await world.post(body)

    assert response.status == 413
    await assert_still_waiting(world, pause_id)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("{not json", "application/json"),
        ("[1, 2, 3]", "application/json"),
        ("payload=%7Bnot-json", "application/x-www-form-urlencoded"),
        ("payload=%5B1%5D", "application/x-www-form-urlencoded"),
        ("\udcff", "application/x-www-form-urlencoded"),
    ],
)
async def test_a_malformed_body_is_a_client_error(
    world: SlackWorld, body: str, content_type: str
) -> None:
    raw = body.encode("utf-8", "surrogateescape")
    response = await world.http.post(
        "/slack/events", data=raw, headers={"Content-Type": content_type}
    )

    assert 400 <= response.status < 500


async def test_health_and_url_verification(world: SlackWorld) -> None:
    health = await world.http.get("/healthz")
    assert health.status == 200
    assert await health.json() == {"status": "ok"}

    body = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "x"})
    response = await world.post(body, content_type="application/json")
    assert response.status == 200
    assert (await response.json())["challenge"] == "c-123"

    await world.bot.close()
    assert (await world.http.get("/healthz")).status == 503


async def test_a_rate_limited_update_is_retried(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    world.stub.fail_next("chat.update", status=429, retry_after=0)

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()

    assert [c.method for c in world.stub.calls if c.method.startswith("chat.update")] == [
        "chat.update#429",
        "chat.update",
    ]


async def test_no_pause_id_in_any_text_or_log(
    world: SlackWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    world.stub.errors["chat.postEphemeral"] = "channel_not_found"  # a logged failure too
    pause_id = await ask_refund(world)

    await world.click(STRANGER, APPROVE_ACTION, pause_id)
    await world.message(MANAGER, "maybe?", thread_ts="1700000000.000001")
    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()

    assert len(world.ledger.runs) == 1
    assert_sent_valid(world.stub.calls, {pause_id})
    for call in world.stub.calls:
        assert pause_id not in str(call.payload.get("text", ""))
    leaked = [
        r for r in caplog.records if pause_id in r.getMessage() or pause_id in (r.exc_text or "")
    ]
    assert leaked == []
    assert any("<redacted>" in r.getMessage() for r in caplog.records)
