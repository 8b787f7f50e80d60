"""``python -m bot serve`` through a Slack outage: its Web API fails for a window of each kind
(500s, 429s with Retry-After, refused connections, calls that hang) while requests come in and
questions are answered; afterwards every question is asked once, every answer runs its tool
once, every message is updated and every request's end is said once. Used by
``tests/slack/test_outages_serve.py`` and ``python -m tests.benchmarks.outages``."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from tests.ports import free_port
from tests.slack.burst import (
    DESK,
    FINAL,
    JSON,
    answers_for,
    env,
    mention,
    pause_of,
    post,
    reply,
    thread_of,
)
from tests.slack.chaos import _until_every_question_is_sent as until_every_question_is_sent
from tests.slack.checks import buttons
from tests.slack.expiring_desk import EXPIRE_AFTER_SETTING, URGENT
from tests.slack.stub import OUTAGE_KINDS, SlackStub
from tests.slack.test_serve import ROOT, wait_healthy

EXPIRING_DESK = "tests.slack.expiring_desk:ExpiringDesk"
RUN_FAILED = "Sorry, this request failed"
"""How the requester is told their request failed (``channels.slack.conversations``)."""

FAST = {
    "SLACK_API_TIMEOUT_SECONDS": "1",  # a hung call costs a second
    "COUNTERSIGN_SWEEP_INTERVAL_SECONDS": "0.5",
}


@dataclass
class OutageReport:
    requests: int
    asked: Counter[str] = field(default_factory=Counter)  # approval posts by pause
    acknowledged: int = 0  # answers Slack got 200 for
    statuses: Counter[int] = field(default_factory=Counter)
    finals: Counter[str] = field(default_factory=Counter)  # ends said, by thread
    ran: Counter[str] = field(default_factory=Counter)  # tools run, as the ends say
    texts: list[str] = field(default_factory=list)  # the ends said
    updated: int = 0  # question messages that lost their buttons
    notes: Counter[str] = field(default_factory=Counter)  # requesters' notes, by thread
    failed_calls: int = 0  # Web API calls the outage failed
    expiring: int = 0  # urgent requests, whose refund expires during the outage
    expired_closed: int = 0  # of their refunds' messages, updated without buttons
    withdrawn_closed: int = 0  # of their expenses' messages (withdrawn), updated without buttons
    failures_told: int = 0  # of their requesters, told the run failed
    seconds_to_catch_up: float = 0.0
    log: str = ""

    @property
    def questions(self) -> int:
        return len(self.asked)

    @property
    def run_twice(self) -> int:
        """Requests whose end says a tool ran twice."""
        return sum(t.count("refunded") > 1 or t.count("booked") > 1 for t in self.texts)


async def start_logged(
    environ: dict[str, str], folder: Path, name: str
) -> asyncio.subprocess.Process:
    """``python -m bot serve`` with its log in a file (an outage logs a lot: a pipe nobody
    reads until the end would fill and stall the process)."""
    log = (folder / f"{name}.log").open("ab")
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "serve",
            cwd=folder,
            env=environ,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log,
        )
    finally:
        log.close()


def questions_of(stub: SlackStub) -> list[str]:
    """The pause of every approval message Slack was given (a hung post counts: it is there)."""
    return [pause_of(c) for c in stub.of("chat.postMessage") if buttons(c.blocks())]


async def stop(process: asyncio.subprocess.Process) -> int:
    """SIGTERM, and the exit code once it ended."""
    if process.returncode is None:
        process.terminate()
    return await asyncio.wait_for(process.wait(), 30)


async def until(check: object, seconds: float, what: str) -> None:
    assert callable(check)
    for _ in range(int(seconds * 10)):
        if check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"not within {seconds} s: {what}")


async def serve_through_outage(
    stub: SlackStub,
    url: str,
    folder: Path,
    *,
    requests: int,
    window: float = 3.0,
    kinds: tuple[str, ...] = OUTAGE_KINDS[:4],
    expiring: int = 0,
) -> OutageReport:
    """Half the requests asked before the outage, the rest during it (one share per window of
    each kind), the first half answered during it; the rest answered once Slack is back.

    ``expiring``: as many urgent requests more (``tests.slack.expiring_desk``), asked just
    before the outage and never answered: their refunds expire about ``2 × window`` seconds into
    it (of ``len(kinds) × window``), which
    fails their runs and withdraws their expenses; once Slack is back, each of those messages
    is updated without its buttons and each requester told."""
    port = free_port()
    events = f"http://127.0.0.1:{port}/slack/events"
    environ = {**env(stub, port, url), **FAST}
    if expiring:
        environ |= {
            "COUNTERSIGN_APP": EXPIRING_DESK,
            "PYTHONPATH": str(ROOT),
            EXPIRE_AFTER_SETTING: str(2 * window),
        }
    process = await start_logged(environ, folder, "serve")
    report = OutageReport(requests=requests, expiring=expiring)
    urgent = range(requests, requests + expiring)
    expiring_pauses: set[str] = set()
    before = requests // 2
    during = list(range(before, requests))
    async with aiohttp.ClientSession() as session:
        try:
            await wait_healthy(session, f"http://127.0.0.1:{port}/healthz", process)
            for i in range(before):
                assert await post(session, events, mention(i), JSON) == 200
            await until(lambda: len(set(questions_of(stub))) >= 2 * before, 60, "first asked")
            answered: set[str] = set()
            first = _answers(stub, range(before), answered)
            asked_before = set(questions_of(stub))
            for i in urgent:
                assert await post(session, events, urgent_mention(i), JSON) == 200
            await until(
                lambda: len(set(questions_of(stub)) - asked_before) >= 2 * expiring,
                60,
                "the urgent questions asked",
            )
            expiring_pauses = set(questions_of(stub)) - asked_before
            answered |= expiring_pauses  # nobody answers them: they expire, or are withdrawn
            shares = [during[k :: len(kinds)] for k in range(len(kinds))]
            answer_shares = [first[k :: len(kinds)] for k in range(len(kinds))]
            for kind, asks, answers in zip(kinds, shares, answer_shares, strict=True):
                await stub.fail_all(kind, retry_after=1)
                for i in asks:
                    report.statuses[await post(session, events, mention(i), JSON)] += 1
                for body, kind_of_body in answers:
                    status = await post(session, events, body, kind_of_body)
                    report.statuses[status] += 1
                    report.acknowledged += status == 200
                await asyncio.sleep(window)
            await stub.restore()
            restored = time.monotonic()
            await until(
                lambda: len(set(questions_of(stub))) >= 2 * (requests + expiring),
                60,
                "every question asked",
            )
            # asked means posted *and* its reference kept: a reply in a hung post's thread
            # finds its question only once the bot found the post
            await until_every_question_is_sent(url, sorted(set(questions_of(stub))))
            for body, kind_of_body in _answers(stub, during, answered):
                status = await post(session, events, body, kind_of_body)
                report.statuses[status] += 1
                report.acknowledged += status == 200
            try:
                await until(lambda: len(_finals(stub)) >= requests, 60, "every request's end said")
            except AssertionError as error:
                said = [
                    (c.payload.get("thread_ts"), str(c.payload.get("text"))[:120])
                    for c in stub.of("chat.postMessage")
                    if c.payload.get("channel") == "C0GENERAL"
                ]
                raise AssertionError(f"{error}: {said}") from None
            await until(
                lambda: questions_closed(stub) >= 2 * (requests + expiring),
                60,
                "every question's message updated",
            )
            await until(
                lambda: len(_notes(stub)) >= requests + expiring, 60, "every requester's note"
            )
            await until(
                lambda: len(closed_questions(stub, expiring_pauses)) >= 2 * expiring,
                60,
                "every expired or withdrawn question's message updated",
            )
            try:
                await until(
                    lambda: len(_failures_told(stub, urgent)) >= expiring, 60, "failures told"
                )
            except AssertionError as error:
                threads = {thread_of(i) for i in urgent}
                told = [
                    str(m.get("text"))[:160] for m in stub.posted if m.get("thread_ts") in threads
                ]
                raise AssertionError(f"{error}: {told}") from None
            report.seconds_to_catch_up = time.monotonic() - restored
            await asyncio.sleep(2)  # a duplicate would come now
        finally:
            await stub.restore()
            await stop(process)
    report.log = (folder / "serve.log").read_text(errors="replace")
    report.asked = Counter(questions_of(stub))
    finals = _finals(stub)
    report.finals = Counter(thread for thread, _ in finals)
    report.texts = [text for _, text in finals]
    for _, text in finals:
        report.ran["refund"] += text.count("refunded")
        report.ran["expense"] += text.count("booked")
    report.updated = questions_closed(stub)
    report.notes = Counter(_notes(stub))
    report.failed_calls = len(stub.failed)
    closed = closed_questions(stub, expiring_pauses)
    report.expired_closed = len(closed & _desk_questions(stub))
    report.withdrawn_closed = len(closed - _desk_questions(stub))
    report.failures_told = len(_failures_told(stub, urgent))
    return report


def urgent_mention(i: int) -> str:
    """Request ``i``, urgent: the expiring desk asks its refund with a question that expires."""
    body = json.loads(mention(i))
    body["event"]["text"] += f" ({URGENT})"
    return json.dumps(body)


def question_messages(stub: SlackStub) -> dict[str, set[tuple[str, str]]]:
    """Each question's own messages (where Slack put them: ``(channel, ts)``), by the pause its
    buttons answer: the posts that carried buttons (a requester's note, a run's end carry
    none)."""
    messages: dict[str, set[tuple[str, str]]] = {}
    for where, blocks in stub.post_blocks.items():
        if shown := buttons(blocks):
            messages.setdefault(str(shown[0]["value"]), set()).add(where)
    return messages


def updated_without_buttons(stub: SlackStub) -> set[tuple[str, str]]:
    """The messages updated to blocks without a button, by ``(channel, ts)``."""
    return {
        (str(u.payload.get("channel")), str(u.payload.get("ts")))
        for u in stub.of("chat.update")
        if u.payload.get("blocks") and not buttons(u.blocks())
    }


def _left_asking(stub: SlackStub) -> dict[str, set[tuple[str, str]]]:
    """Each question's messages not (yet) updated without their buttons, by its pause: empty
    for a question closed everywhere."""
    closed = updated_without_buttons(stub)
    return {pause: messages - closed for pause, messages in question_messages(stub).items()}


def closed_questions(stub: SlackStub, pauses: set[str] | None = None) -> set[str]:
    """The questions (of ``pauses``, else all) every message of which was updated without its
    buttons."""
    return {
        pause
        for pause, left in _left_asking(stub).items()
        if not left and (pauses is None or pause in pauses)
    }


def still_asking(stub: SlackStub) -> dict[str, list[tuple[str, str]]]:
    """The questions with a message never updated without its buttons, and those messages:
    what a wait for every question closed names when it gives up."""
    return {pause: sorted(left) for pause, left in _left_asking(stub).items() if left}


def questions_closed(stub: SlackStub) -> int:
    """How many questions had every message of theirs updated without its buttons: each
    question counted once, however many messages it had; other messages (a requester's note)
    not at all."""
    return len(closed_questions(stub))


def _desk_questions(stub: SlackStub) -> set[str]:
    return {pause_of(c) for c in stub.of("chat.postMessage") if c.payload.get("channel") == DESK}


def _failures_told(stub: SlackStub, requests: range) -> set[str]:
    """The threads of ``requests`` told their run failed."""
    threads = {thread_of(i) for i in requests}
    return {
        str(m.get("thread_ts"))
        for m in stub.posted
        if m.get("thread_ts") in threads and RUN_FAILED in str(m.get("text") or "")
    }


def _answers(
    stub: SlackStub, indexes: range | list[int], answered: set[str]
) -> list[tuple[str, str]]:
    """The answers to give now: every refund question not answered yet, approved by click or
    rejected by modal in turn, and the expenses of requests ``indexes``, approved by a reply
    in the requester's thread."""
    refunds = []
    for call in stub.of("chat.postMessage"):
        if call.payload.get("channel") != DESK or not buttons(call.blocks()):
            continue
        pause = pause_of(call)
        if pause not in answered:
            answered.add(pause)
            refunds.append(call)
    return answers_for(refunds, 0) + [(reply(i), JSON) for i in indexes]


def _finals(stub: SlackStub) -> list[tuple[str, str]]:
    return [
        (str(p.payload.get("thread_ts")), match.group(1))
        for p in stub.of("chat.postMessage")
        if (match := FINAL.match(str(p.payload.get("text") or "")))
    ]


def _notes(stub: SlackStub) -> list[str]:
    """The thread of every requester's note Slack was given (a refund waits at the desk)."""
    return [
        str(m.get("thread_ts"))
        for m in stub.posted
        if str(m.get("text") or "").startswith("Waiting for approval")
    ]
