"""Regressions at the HTTP edge: each request here was answered 500 before the edge checked it.

Unsigned ones must be refused (4xx) before anything parses them; signed but malformed ones must
be refused or answered without a 5xx, and never resume the waiting pause.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal
from urllib.parse import quote

import pytest

from channels.slack import edge
from channels.slack.edge import MAX_DEPTH, too_deep
from channels.slack.render import APPROVE_ACTION, EDIT_MODAL, REJECT_MODAL
from channels.slack.render_modal import REASON_ACTION, REASON_BLOCK
from channels.slack.signing import MetadataSigner, ModalMetadata
from tests.benchmarks.slack_ack import click_body as a_click
from tests.slack.conftest import SECRET, SlackWorld, interactive_body, signed_headers
from tests.slack.office import MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund
from tests.slack.test_http import assert_still_waiting, click_body

DEEP = 5_000
FORM = "application/x-www-form-urlencoded"


async def post_bytes(world: SlackWorld, raw: bytes, headers: dict[str, str]) -> int:
    response = await world.http.post("/slack/events", data=raw, headers=headers)
    await response.read()
    return response.status


async def post_raw_http(
    world: SlackWorld, raw: bytes, header_lines: list[bytes], *, content_type: str = FORM
) -> int:
    """Send header bytes as they are (aiohttp's client would refuse or re-encode some)."""
    server = world.http.server
    reader, writer = await asyncio.open_connection(server.host, server.port)
    head = [
        b"POST /slack/events HTTP/1.1",
        f"Host: {server.host}".encode(),
        f"Content-Type: {content_type}".encode(),
        f"Content-Length: {len(raw)}".encode(),
        b"Connection: close",
        *header_lines,
    ]
    writer.write(b"\r\n".join(head) + b"\r\n\r\n" + raw)
    await writer.drain()
    status_line = await reader.readline()
    writer.close()
    await writer.wait_closed()
    return int(status_line.split()[1])


def signed(raw: bytes, content_type: str) -> dict[str, str]:
    return {"Content-Type": content_type, **signed_headers(raw.decode())}


# ------------------------------------------------------------------- unsigned (item 4)


@pytest.mark.parametrize(
    ("raw", "content_type"),
    [
        (b'{"a":' * DEEP + b"1" + b"}" * DEEP, "application/json"),
        (b"[" * DEEP + b"]" * DEEP, "application/json"),
        (b"payload=" + quote("[" * DEEP + "]" * DEEP).encode(), FORM),
    ],
    ids=["deep json object", "deep json array", "deep form payload"],
)
async def test_an_unsigned_deeply_nested_body_is_refused(
    world: SlackWorld, raw: bytes, content_type: str
) -> None:
    status = await post_bytes(world, raw, {"Content-Type": content_type})

    assert status == 401


@pytest.mark.parametrize("charset", ["no-such-charset", "utf-7x", "x" * 300])
async def test_an_unsigned_request_with_an_unknown_charset_is_refused(
    world: SlackWorld, charset: str
) -> None:
    pause_id = await ask_refund(world)
    headers = {"Content-Type": f"application/x-www-form-urlencoded; charset={charset}"}

    status = await post_bytes(world, click_body(pause_id).encode(), headers)

    assert status == 401
    await assert_still_waiting(world, pause_id)


@pytest.mark.parametrize(
    "signature",
    ["v0=é" + "0" * 63, "v0=" + "0" * 63 + "ü", "ünicode", "v0=" + "0" * 64 + "€"],
)
async def test_an_unsigned_request_with_a_non_ascii_signature_is_401(
    world: SlackWorld, signature: str
) -> None:
    pause_id = await ask_refund(world)
    raw = click_body(pause_id).encode()
    stamp = signed_headers("")["X-Slack-Request-Timestamp"]

    status = await post_raw_http(
        world,
        raw,
        [
            f"X-Slack-Request-Timestamp: {stamp}".encode(),
            b"X-Slack-Signature: " + signature.encode("utf-8"),
        ],
    )

    assert status == 401
    await assert_still_waiting(world, pause_id)


@pytest.mark.parametrize(
    "timestamp",
    ["9" * 5000, "9" * 400, "1" + "0" * 20, "0" * 13 + "1", "-1", "+1700000000", "1e10"],
)
async def test_an_unsigned_request_with_an_absurd_timestamp_is_401(
    world: SlackWorld, timestamp: str
) -> None:
    pause_id = await ask_refund(world)
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": "v0=" + "0" * 64,
    }

    status = await post_bytes(world, click_body(pause_id).encode(), headers)

    assert status == 401
    await assert_still_waiting(world, pause_id)


async def test_an_overlong_signature_header_is_401(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    raw = click_body(pause_id).encode()
    headers = signed(raw, "application/x-www-form-urlencoded")
    headers["X-Slack-Signature"] += "0" * 4000

    assert await post_bytes(world, raw, headers) == 401
    await assert_still_waiting(world, pause_id)


# ------------------------------------------------------------------- signed, unreadable


@pytest.mark.parametrize(
    ("raw", "content_type"),
    [
        (b'{"a":' * DEEP + b"1" + b"}" * DEEP, "application/json"),
        (b'{"type": "event_callback", "event": ' + b"[" * DEEP + b"]" * DEEP + b"}", "text/plain"),
        (b"payload=" + quote("[" * DEEP + "]" * DEEP).encode(), FORM),
        (b"payload=" + quote('{"a":' * 70 + "1" + "}" * 70).encode(), FORM),
    ],
    ids=["deep json", "deep json, plain text", "deep form payload", "70 levels"],
)
async def test_a_signed_deeply_nested_body_is_400(
    world: SlackWorld, raw: bytes, content_type: str
) -> None:
    pause_id = await ask_refund(world)

    status = await post_bytes(world, raw, signed(raw, content_type))

    assert status == 400
    await assert_still_waiting(world, pause_id)


async def test_a_signed_body_in_an_unknown_charset_is_400(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    raw = click_body(pause_id).encode()

    status = await post_bytes(
        world, raw, signed(raw, "application/x-www-form-urlencoded; charset=no-such-charset")
    )

    assert status == 400
    await assert_still_waiting(world, pause_id)


async def test_a_signed_click_declared_utf8_still_works(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    raw = click_body(pause_id).encode()

    status = await post_bytes(
        world, raw, signed(raw, "application/x-www-form-urlencoded; charset=UTF-8")
    )
    await world.settle()

    assert status == 200
    assert len(world.ledger.runs) == 1


# ------------------------------------------------------------------- signed, malformed (item 5)


def click_payload(pause_id: str) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "team": {"id": TEAM},
        "user": {"id": MANAGER, "team_id": TEAM},
        "container": {"type": "message", "channel_id": "C0APPROVALS", "is_ephemeral": False},
        "channel": {"id": "C0APPROVALS"},
        "trigger_id": "t",
        "response_url": "http://127.0.0.1:9/none",
        "actions": [{"type": "button", "action_id": APPROVE_ACTION, "value": pause_id}],
    }


def submission_payload(callback_id: str, view: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "view_submission",
        "team": {"id": TEAM},
        "user": {"id": MANAGER, "team_id": TEAM},
        "trigger_id": "t",
        "view": {"id": "V0MODAL", "type": "modal", "callback_id": callback_id, **view},
    }


MALFORMED_CLICKS: dict[str, Any] = {
    "user is a string": {"user": MANAGER},
    "user is a list": {"user": [MANAGER]},
    "user id is a number": {"user": {"id": 7}},
    "team is a string": {"team": TEAM},
    "actions is an object": {"actions": {"action_id": APPROVE_ACTION, "value": "{pause}"}},
    "actions is a string": {"actions": "approve"},
    "actions is empty": {"actions": []},
    "an action is a string": {"actions": ["approve"]},
    "action_id is a number": {"actions": [{"action_id": 1, "value": "{pause}"}]},
    "value is a number": {"actions": [{"action_id": APPROVE_ACTION, "value": 12}]},
    "value is an object": {"actions": [{"action_id": APPROVE_ACTION, "value": {"v": 1}}]},
    "channel is a string": {"channel": "C0APPROVALS"},
    "container is a list": {"container": []},
    "response_url is a number": {"response_url": 9},
}


@pytest.mark.parametrize("change", MALFORMED_CLICKS.values(), ids=MALFORMED_CLICKS.keys())
async def test_a_signed_click_of_the_wrong_shape_is_refused_and_resumes_nothing(
    world: SlackWorld, change: dict[str, Any]
) -> None:
    pause_id = await ask_refund(world)
    payload = click_payload(pause_id) | json.loads(json.dumps(change).replace("{pause}", pause_id))

    response = await world.post(interactive_body(payload))

    assert 400 <= response.status < 500
    await assert_still_waiting(world, pause_id)


MALFORMED_VIEWS: dict[str, tuple[str, dict[str, Any]]] = {
    "non-ascii metadata, reject": (REJECT_MODAL, {"private_metadata": "e30.é"}),
    "non-ascii metadata, edit": (EDIT_MODAL, {"private_metadata": "e30.ü" * 3}),
    "metadata a number": (REJECT_MODAL, {"private_metadata": 12}),
    "state a string, edit": (EDIT_MODAL, {"private_metadata": "x.y", "state": "values"}),
    "state a list, reject": (REJECT_MODAL, {"private_metadata": "x.y", "state": []}),
    "state null": (EDIT_MODAL, {"private_metadata": "x.y", "state": None}),
    "values a list": (EDIT_MODAL, {"private_metadata": "x.y", "state": {"values": [1]}}),
    "view a string": (REJECT_MODAL, {}),
}


@pytest.mark.parametrize(
    ("callback_id", "view"), MALFORMED_VIEWS.values(), ids=MALFORMED_VIEWS.keys()
)
async def test_a_signed_submission_of_the_wrong_shape_is_refused_and_resumes_nothing(
    world: SlackWorld, callback_id: str, view: dict[str, Any]
) -> None:
    pause_id = await ask_refund(world)
    payload = submission_payload(callback_id, view)
    if not view:
        payload["view"] = "V0MODAL"

    response = await world.post(interactive_body(payload))

    if response.status == 200:  # refused in the modal, which shows the error
        assert (await response.json())["response_action"] == "errors"
    else:
        assert 400 <= response.status < 500
    await assert_still_waiting(world, pause_id)


MALFORMED_EVENTS: dict[str, Any] = {
    "event a string": "message",
    "event a list": [{"type": "message"}],
    "user an object": {"type": "message", "user": {"id": MANAGER}, "text": "ok", "ts": "1.2"},
    "text a number": {"type": "message", "user": MANAGER, "text": 5, "ts": "1.2"},
    "mention, channel a list": {"type": "app_mention", "user": MANAGER, "channel": ["C"]},
}


@pytest.mark.parametrize("event", MALFORMED_EVENTS.values(), ids=MALFORMED_EVENTS.keys())
async def test_a_signed_event_of_the_wrong_shape_is_never_a_server_error(
    world: SlackWorld, event: Any
) -> None:
    pause_id = await ask_refund(world)
    envelope = {"type": "event_callback", "team_id": TEAM, "event_id": "Ev0BAD", "event": event}

    response = await world.post(json.dumps(envelope), content_type="application/json")

    assert response.status < 500
    await assert_still_waiting(world, pause_id)


# ------------------------------------------------------------------- wrong types (issue 25, item 3)

EVENTS_OF_ANY_TYPE: dict[str, Any] = {
    "event type a list": {"type": ["message"], "user": MANAGER, "text": "approve"},
    "event type an object": {"type": {"name": "message"}, "user": MANAGER, "text": "approve"},
    "event type a list, home": {"type": ["app_home_opened"], "user": MANAGER, "tab": "home"},
}


@pytest.mark.parametrize("event", EVENTS_OF_ANY_TYPE.values(), ids=EVENTS_OF_ANY_TYPE.keys())
async def test_an_event_whose_type_is_not_a_string_is_400(world: SlackWorld, event: Any) -> None:
    """``event.type`` was looked up in a set: a list or an object raised (a 500)."""
    pause_id = await ask_refund(world)
    envelope = {"type": "event_callback", "team_id": TEAM, "event_id": "Ev0TYPE", "event": event}

    response = await world.post(json.dumps(envelope), content_type="application/json")

    assert response.status == 400
    await assert_still_waiting(world, pause_id)


READ_IN_EVERY_PAYLOAD: dict[str, dict[str, Any]] = {
    "event a number, another type": {"type": "app_rate_limited", "event": 7},
    "event a list, no type": {"event": [{"type": "message"}]},
    "view a number, another type": {"type": "shortcut", "callback_id": "c", "view": 7},
    "view without its type": {
        "type": "view_submission",
        "user": {"id": MANAGER},
        "view": {"callback_id": "someone_elses_modal"},
    },
    "team id an object, a command": {
        "command": "/pending",
        "user_id": MANAGER,
        "team_id": {"id": TEAM},
        "response_url": "http://127.0.0.1:9/none",
    },
    "team id an object, an event's authorizations": {
        "type": "event_callback",
        "event_id": "Ev0AUTH",
        "event": {"type": "app_home_opened", "user": MANAGER, "tab": "home"},
        "authorizations": [{"team_id": {"id": TEAM}, "user_id": "U0BOT"}],
    },
}


@pytest.mark.parametrize(
    "payload", READ_IN_EVERY_PAYLOAD.values(), ids=READ_IN_EVERY_PAYLOAD.keys()
)
async def test_a_field_bolt_reads_of_any_payload_with_the_wrong_type_is_400(
    world: SlackWorld, payload: dict[str, Any]
) -> None:
    """Bolt reads ``event.bot_id``, ``view.type`` and the team, user and channel ids of every
    payload (its per-request client sends ``team_id`` with each call): another type was a 500.
    Each request here is the world's first, as Bolt checks its token on the first one."""
    pause_id = await ask_refund(world)

    as_json = await world.post(json.dumps(payload), content_type="application/json")
    as_form = await world.post(interactive_body(payload))

    assert (as_json.status, as_form.status) == (400, 400)
    await assert_still_waiting(world, pause_id)


def _sealed(kind: Literal["reject", "edit"], pause_id: str) -> str:
    metadata = ModalMetadata(kind=kind, pause_id=pause_id, user=MANAGER, channel="C0APPROVALS")
    return MetadataSigner(SECRET).seal(metadata)


TYPED_VALUES: dict[str, tuple[str, dict[str, Any]]] = {
    "a reason that is a number": (REJECT_MODAL, {REASON_BLOCK: {REASON_ACTION: {"value": 7}}}),
    "a reason that is a list": (
        REJECT_MODAL,
        {REASON_BLOCK: {REASON_ACTION: {"value": ["too much"]}}},
    ),
    "an amount that is a number": (
        EDIT_MODAL,
        {"order_id": {"value": {"value": "7"}}, "amount": {"value": {"value": 20}}},
    ),
    "an option that is a string": (
        EDIT_MODAL,
        {"order_id": {"value": {"value": "7", "selected_option": "0"}}},
    ),
}


@pytest.mark.parametrize(("callback_id", "values"), TYPED_VALUES.values(), ids=TYPED_VALUES.keys())
async def test_a_submission_whose_input_is_not_text_is_refused_not_read_as_empty(
    world: SlackWorld, callback_id: str, values: dict[str, Any]
) -> None:
    """An input's ``value`` Slack sends as a string (or null): another type was read as left
    empty, so the approver's reject went through without its reason, and an edit approved the
    amount it did not change."""
    pause_id = await ask_refund(world)
    kind: Literal["reject", "edit"] = "reject" if callback_id == REJECT_MODAL else "edit"
    view = {"private_metadata": _sealed(kind, pause_id), "state": {"values": values}}

    response = await world.post(interactive_body(submission_payload(callback_id, view)))

    assert response.status == 400
    await assert_still_waiting(world, pause_id)


def test_a_click_is_not_decoded_to_learn_how_deep_it_nests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting its brackets is enough for every body Slack sends: decoding a click's form
    to scan it cost a tenth of the ack path's own time (issue 32)."""

    def decoded_anyway(body: str) -> list[tuple[str, str]]:
        raise AssertionError("the form was decoded")

    monkeypatch.setattr(edge, "parse_qsl", decoded_anyway)
    assert not too_deep(a_click("0" * 32))
    assert not too_deep(quote("[" * MAX_DEPTH) + "x")
    monkeypatch.undo()
    for opening in ("[", "{", "%5B", "%5b", "%7B", "%7b"):
        assert too_deep("payload=" + opening * (MAX_DEPTH + 1))
