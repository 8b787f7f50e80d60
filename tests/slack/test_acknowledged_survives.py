"""Nothing acknowledged is lost: ``python -m bot serve`` is SIGKILLed right after it answered 200
to a burst of answers — Approve clicks, reject modal submissions, thread replies — and a new
process on the same database continues every one of them, each tool once, and updates Slack.

Real processes against the Web API stub on loopback, on a SQLite file and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.slack.render import APPROVE_ACTION, REJECT_MODAL
from bot.slack.render_modal import REASON_ACTION, REASON_BLOCK
from bot.slack.signing import MetadataSigner, ModalMetadata
from tests.cli.processes import free_port, person_env
from tests.databases import BACKENDS, TEST_ENCRYPTION_KEYS, database
from tests.slack.checks import buttons
from tests.slack.conftest import SECRET, interactive_body, signed_headers
from tests.slack.stub import BOT_USER, TEAM, SlackStub
from tests.slack.test_serve import start_serve, stop, wait_healthy

REQUESTS = 12  # each asks two questions: a refund (channel) and an expense (the requester's)
DESK = "C0DESK"
MANAGER = "U0MANAGER"
OWNER = "U0OWNER"
FINAL = re.compile(r"^Here is what happened: (.*)$")


def _env(stub: SlackStub, port: int, url: str) -> dict[str, str]:
    return person_env(
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=stub.api_url,
        PORT=str(port),
        DATABASE_URL=url,
        COUNTERSIGN_ENCRYPTION_KEYS=TEST_ENCRYPTION_KEYS,
        COUNTERSIGN_APPROVAL_CHANNEL=DESK,
        COUNTERSIGN_APPROVERS=MANAGER,
        COUNTERSIGN_DESK_MODEL="offline",
    )


def _mention(i: int) -> str:
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": TEAM,
            "event_id": f"Ev0MENTION{i:04d}",
            "event": {
                "type": "app_mention",
                "user": OWNER,
                "text": f"<@{BOT_USER}> please handle request {i}",
                "channel": "C0GENERAL",
                "ts": _thread(i),
            },
        }
    )


def _thread(i: int) -> str:
    return f"1700001000.{i:06d}"


def _click(pause_id: str) -> str:
    return interactive_body(
        {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": MANAGER, "team_id": TEAM},
            "container": {"type": "message", "channel_id": DESK, "is_ephemeral": False},
            "channel": {"id": DESK},
            "trigger_id": "t",
            "actions": [{"type": "button", "action_id": APPROVE_ACTION, "value": pause_id}],
        }
    )


def _reject_submission(pause_id: str) -> str:
    sealed = MetadataSigner(SECRET).seal(
        ModalMetadata(kind="reject", pause_id=pause_id, user=MANAGER, channel=DESK)
    )
    values = {REASON_BLOCK: {REASON_ACTION: {"type": "plain_text_input", "value": "too much"}}}
    return interactive_body(
        {
            "type": "view_submission",
            "team": {"id": TEAM},
            "user": {"id": MANAGER, "team_id": TEAM},
            "view": {
                "id": "V0MODAL",
                "type": "modal",
                "callback_id": REJECT_MODAL,
                "private_metadata": sealed,
                "state": {"values": values},
            },
        }
    )


def _reply(i: int) -> str:
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": TEAM,
            "event_id": f"Ev0REPLY{i:04d}",
            "event": {
                "type": "message",
                "user": OWNER,
                "text": "approve",
                "channel": "C0GENERAL",
                "channel_type": "channel",
                "ts": f"1700002000.{i:06d}",
                "thread_ts": _thread(i),
            },
        }
    )


async def _post(session: aiohttp.ClientSession, url: str, body: str, kind: str) -> int:
    headers = {"Content-Type": kind, **signed_headers(body)}
    async with session.post(url, data=body.encode(), headers=headers) as response:
        return response.status


JSON, FORM = "application/json", "application/x-www-form-urlencoded"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_every_acknowledged_answer_is_continued_once_after_a_sigkill(
    stub: SlackStub, tmp_path: Path, backend: str
) -> None:
    async with database(backend, tmp_path) as url:
        port = free_port()
        events = f"http://127.0.0.1:{port}/slack/events"
        health = f"http://127.0.0.1:{port}/healthz"
        first = await start_serve(_env(stub, port, url), tmp_path)
        async with aiohttp.ClientSession() as session:
            try:
                await wait_healthy(session, health, first)
                for i in range(REQUESTS):
                    assert await _post(session, events, _mention(i), JSON) == 200
                questions = await _wait_for_questions(stub, 2 * REQUESTS)
                refunds = [q for q in questions if q.payload["channel"] == DESK]
                assert len(refunds) == REQUESTS
                answers = [
                    (_click(_pause_of(q)), FORM)
                    if n % 2 == 0
                    else (_reject_submission(_pause_of(q)), FORM)
                    for n, q in enumerate(refunds)
                ] + [(_reply(i), JSON) for i in range(REQUESTS)]
                statuses = await asyncio.gather(
                    *(_post(session, events, body, kind) for body, kind in answers)
                )
                assert statuses == [200] * len(answers)
            finally:
                first.send_signal(signal.SIGKILL)  # right after the last 200
                await first.wait()

            second = await start_serve(_env(stub, port, url), tmp_path)
            try:
                await wait_healthy(session, health, second)
                finals = await _wait_for_finals(stub, REQUESTS)
            finally:
                _, _, err = await stop(second)
    recovered = err.count("recovery: continuing execution")
    print(f"{backend}: {recovered} of {REQUESTS} trees continued by the restarted process")
    by_thread = Counter(thread for thread, _ in finals)
    assert by_thread == Counter({_thread(i): 1 for i in range(REQUESTS)}), err
    texts = [text for _, text in finals]
    approved = [t for t in texts if "refunded 120.00" in t]
    rejected = [t for t in texts if "the refund was rejected: too much" in t]
    assert (len(approved), len(rejected)) == (REQUESTS // 2, REQUESTS // 2), texts
    assert all(t.count("booked 86.50") == 1 and t.count("refunded") <= 1 for t in texts), texts
    closed = {
        (u.payload["channel"], u.payload["ts"])
        for u in stub.of("chat.update")
        if u.payload.get("blocks") and not buttons(u.blocks())
    }
    assert len(closed) >= 2 * REQUESTS  # every question's message lost its buttons


async def _wait_for_questions(stub: SlackStub, count: int) -> list[Any]:
    for _ in range(600):
        questions = [m for m in stub.of("chat.postMessage") if buttons(m.blocks())]
        if len(questions) >= count:
            return questions
        await asyncio.sleep(0.1)
    raise AssertionError(f"only {len(questions)} of {count} questions were asked")


def _pause_of(question: Any) -> str:
    return str(buttons(question.blocks())[0]["value"])


async def _wait_for_finals(stub: SlackStub, count: int) -> list[tuple[str, str]]:
    """The final answers said in the requesters' threads, once ``count`` arrived (or 60 s)."""
    for _ in range(600):
        finals = [
            (str(p.payload.get("thread_ts")), match.group(1))
            for p in stub.of("chat.postMessage")
            if (match := FINAL.match(str(p.payload.get("text") or "")))
        ]
        if len(finals) >= count:
            await asyncio.sleep(0.5)  # a duplicate would come now
            return [
                (str(p.payload.get("thread_ts")), match.group(1))
                for p in stub.of("chat.postMessage")
                if (match := FINAL.match(str(p.payload.get("text") or "")))
            ]
        await asyncio.sleep(0.1)
    raise AssertionError(f"only {len(finals)} of {count} requests finished")
