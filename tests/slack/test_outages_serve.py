"""Real processes through a Slack outage (issue 24): ``python -m bot serve`` against the Web API
stub failing for a window of each kind — 500s, 429s with Retry-After, refused connections,
calls that hang — while requests come in and questions are answered. Afterwards every question
was asked once, every acknowledged answer ran its tool once, every message was updated and
every request's end said once; nothing was duplicated. And a restart of ``serve`` during an
outage: the first click after it is recorded and runs."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from tests.ports import free_port
from tests.slack.burst import DESK, FORM, JSON, click, env, mention, pause_of, post
from tests.slack.checks import buttons
from tests.slack.outages import FAST, serve_through_outage, start_logged, stop, until
from tests.slack.stub import SlackStub
from tests.slack.test_serve import wait_healthy

REQUESTS = 8  # each asks two questions: a refund (the desk) and an expense (the requester's)
EXPIRING = 2  # urgent requests more, never answered: the refund expires, the expense withdrawn
RECORDED = "answer recorded: approved refund-card-tool"


async def test_a_slack_outage_of_every_kind_loses_nothing(stub: SlackStub, tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    report = await serve_through_outage(
        stub, url, tmp_path, requests=REQUESTS, window=1.0, expiring=EXPIRING
    )

    assert report.failed_calls > 0  # the outage did meet the bot's calls
    assert set(report.statuses) == {200}, report.statuses  # acked; no 5xx for Slack's failure
    assert report.questions == 2 * (REQUESTS + EXPIRING)
    assert set(report.asked.values()) == {1}, report.asked  # every question asked once
    assert report.finals == dict.fromkeys(report.finals, 1) and len(report.finals) == REQUESTS
    assert report.ran["refund"] == REQUESTS // 2  # the approved half, once each
    assert report.ran["expense"] == REQUESTS
    assert report.updated >= 2 * (REQUESTS + EXPIRING)  # every question's message lost its buttons
    # the questions that expired during the outage, and those withdrawn as their runs failed,
    # lost their buttons once Slack was back; their requesters were told
    assert (report.expired_closed, report.withdrawn_closed) == (EXPIRING, EXPIRING)
    assert report.failures_told == EXPIRING
    assert len(report.notes) == REQUESTS + EXPIRING, report.notes
    assert set(report.notes.values()) == {1}, report.notes
    assert "Traceback" not in report.log, report.log[-3000:]


async def test_the_first_click_after_a_restart_during_an_outage_is_not_lost(
    stub: SlackStub, tmp_path: Path
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    port = free_port()
    events = f"http://127.0.0.1:{port}/slack/events"
    health = f"http://127.0.0.1:{port}/healthz"
    environ = {**env(stub, port, url), **FAST}
    async with aiohttp.ClientSession() as session:
        first = await start_logged(environ, tmp_path, "first")
        try:
            await wait_healthy(session, health, first)
            assert await post(session, events, mention(0), JSON) == 200
            await until(lambda: len(stub.of("chat.postMessage")) >= 2, 30, "asked")
        finally:
            await stop(first)
        [refund] = [
            c
            for c in stub.of("chat.postMessage")
            if c.payload["channel"] == DESK and buttons(c.blocks())
        ]
        await stub.fail_all("500")  # auth.test too: the new process cannot learn its ids
        second = await start_logged(environ, tmp_path, "second")
        try:
            await wait_healthy(session, health, second)
            assert await post(session, events, click(pause_of(refund)), FORM) == 200
            await until(lambda: RECORDED in read_log(tmp_path / "second.log"), 30, "recorded")
            await stub.restore()  # recorded while Slack still failed
            question = (DESK, next(m["ts"] for m in stub.posted if m["channel"] == DESK))
            await until(
                lambda: any(
                    (u.payload.get("channel"), u.payload.get("ts")) == question
                    and u.payload.get("blocks")
                    and not buttons(u.blocks())
                    for u in stub.of("chat.update")
                ),
                30,
                "the approved question's message updated",
            )
        finally:
            await stub.restore()
            await stop(second)
    assert "auth.test" in stub.failed
    log = read_log(tmp_path / "second.log")
    assert "reinstall" not in log
    assert RECORDED in log


def read_log(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
