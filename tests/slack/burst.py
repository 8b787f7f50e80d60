"""A burst of Slack traffic for the desk served by ``python -m bot serve`` on the offline model:
mentions that each ask two questions (a refund in the desk channel, an expense in the
requester's thread), and signed answers to them — Approve clicks, reject modal submissions,
thread replies — as Slack sends them. Used by the crash tests and the chaos benchmark."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import aiohttp

from channels.slack.render import APPROVE_ACTION, REJECT_MODAL
from channels.slack.render_modal import REASON_ACTION, REASON_BLOCK
from channels.slack.signing import MetadataSigner, ModalMetadata
from tests.cli.processes import person_env
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.slack.checks import buttons
from tests.slack.conftest import SECRET, interactive_body, signed_headers
from tests.slack.stub import BOT_USER, TEAM, SlackStub

DESK = "C0DESK"
MANAGER = "U0MANAGER"
OWNER = "U0OWNER"
FINAL = re.compile(r"^Here is what happened: (.*)$")
INTERRUPTED = "may or may not have run (the process stopped while it ran)"
"""What the model says of an approved tool a SIGKILL interrupted (``bot.runtime.run_once``)."""


def env(stub: SlackStub, port: int, url: str) -> dict[str, str]:
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


def mention(i: int) -> str:
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
                "ts": thread_of(i),
            },
        }
    )


def thread_of(i: int) -> str:
    return f"1700001000.{i:06d}"


def click(pause_id: str, response_url: str | None = None) -> str:
    """``response_url``: where the clicker is told things (none: ``chat.postEphemeral``)."""
    payload: dict[str, Any] = {
        "type": "block_actions",
        "team": {"id": TEAM},
        "user": {"id": MANAGER, "team_id": TEAM},
        "container": {"type": "message", "channel_id": DESK, "is_ephemeral": False},
        "channel": {"id": DESK},
        "trigger_id": "t",
        "actions": [{"type": "button", "action_id": APPROVE_ACTION, "value": pause_id}],
    }
    if response_url is not None:
        payload["response_url"] = response_url
    return interactive_body(payload)


def reject_submission(pause_id: str, response_url: str | None = None) -> str:
    sealed = MetadataSigner(SECRET).seal(
        ModalMetadata(
            kind="reject",
            pause_id=pause_id,
            user=MANAGER,
            channel=DESK,
            response_url=response_url,
        )
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


def reply(i: int, again: int = 0) -> str:
    """The requester's "approve" in thread ``i``; ``again``: the same words written again (a
    new message: its own event and ts)."""
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": TEAM,
            "event_id": f"Ev0REPLY{i:04d}" + (f"A{again}" if again else ""),
            "event": {
                "type": "message",
                "user": OWNER,
                "text": "approve",
                "channel": "C0GENERAL",
                "channel_type": "channel",
                "ts": f"170000{2000 + again}.{i:06d}",
                "thread_ts": thread_of(i),
            },
        }
    )


async def post(session: aiohttp.ClientSession, url: str, body: str, kind: str) -> int:
    headers = {"Content-Type": kind, **signed_headers(body)}
    async with session.post(url, data=body.encode(), headers=headers) as response:
        return response.status


JSON, FORM = "application/json", "application/x-www-form-urlencoded"


async def wait_for_questions(stub: SlackStub, count: int) -> list[Any]:
    for _ in range(600):
        questions = [m for m in stub.of("chat.postMessage") if buttons(m.blocks())]
        if len(questions) >= count:
            return questions
        await asyncio.sleep(0.1)
    raise AssertionError(f"only {len(questions)} of {count} questions were asked")


def pause_of(question: Any) -> str:
    return str(buttons(question.blocks())[0]["value"])


async def wait_for_finals(
    stub: SlackStub, count: int, *, seconds: float = 60
) -> list[tuple[str, str]]:
    """The final answers said in the requesters' threads, once ``count`` arrived."""
    for _ in range(int(seconds * 10)):
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


def answers_for(
    refunds: list[Any], requests: int, hooks: str | None = None
) -> list[tuple[str, str]]:
    """Every question's answer: the refunds approved by click (even) or rejected in the modal
    (odd), every expense approved by a reply in the requester's thread. ``hooks``: the root of
    the ``response_url`` each click and modal is told at (``<hooks>/answer-<n>``)."""

    def told_at(n: int) -> str | None:
        return None if hooks is None else f"{hooks}/answer-{n}"

    by_modal = [
        (click(pause_of(q), told_at(n)), FORM)
        if n % 2 == 0
        else (reject_submission(pause_of(q), told_at(n)), FORM)
        for n, q in enumerate(refunds)
    ]
    return by_modal + [(reply(i), JSON) for i in range(requests)]


def check_finished(stub: SlackStub, finals: list[tuple[str, str]], requests: int) -> None:
    """Each request finished once, with the answers given, and every question's message lost
    its buttons."""
    by_thread: dict[str, int] = {}
    for thread, _ in finals:
        by_thread[thread] = by_thread.get(thread, 0) + 1
    assert by_thread == {thread_of(i): 1 for i in range(requests)}, sorted(by_thread.items())
    texts = [text for _, text in finals]
    # A SIGKILL that lands while an approved tool runs leaves it "may or may not have run": the
    # survivor never runs it again (at most once) and the model says so; that is a continued
    # answer too, but it must stay rare (the kill is one instant) and never hide a second run.
    interrupted = [t for t in texts if INTERRUPTED in t]
    approved = [t for t in texts if "refunded 120.00" in t or "the refund did not happen" in t]
    rejected = [t for t in texts if "the refund was rejected: too much" in t]
    assert (len(approved), len(rejected)) == (requests - requests // 2, requests // 2), texts
    assert all(t.count("refunded") <= 1 and t.count("booked") <= 1 for t in texts), texts
    assert all("booked 86.50" in t or "the expense did not happen" in t for t in texts), texts
    assert len(interrupted) <= max(1, requests // 4), texts
    closed = {
        (u.payload["channel"], u.payload["ts"])
        for u in stub.of("chat.update")
        if u.payload.get("blocks") and not buttons(u.blocks())
    }
    assert len(closed) >= 2 * requests  # every question's message lost its buttons
