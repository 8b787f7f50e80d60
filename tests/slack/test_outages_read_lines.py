"""A thread reply's "Read X as …" line survives a SIGKILL of ``python -m bot serve``: the reply
is recorded and acknowledged, Slack fails the line (it stays owed in the database), the process
is killed; a second process started on the same database says the line once Slack is back, once
(``channels.slack.read_lines``; the in-process version is in ``test_outbox.py``)."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from pathlib import Path

import aiohttp

from tests.ports import free_port
from tests.slack.burst import JSON, env, mention, post, reply, thread_of
from tests.slack.outages import FAST, start_logged, stop, until
from tests.slack.stub import SlackStub
from tests.slack.test_outages_serve import read_log
from tests.slack.test_serve import wait_healthy

READ = 'Read "approve" as '
RECORDED = "answer recorded: approved"


def _line_failed(folder: Path) -> bool:
    """Whether the database holds the line as owed after Slack failed it (``cs_outbox``)."""
    with sqlite3.connect(folder / "countersign.db", timeout=5) as database:
        rows = database.execute(
            "SELECT last_error FROM cs_outbox WHERE kind = 'read_line' AND last_error IS NOT NULL"
        ).fetchall()
    return bool(rows)


def _lines(stub: SlackStub) -> list[dict[str, object]]:
    return [m for m in stub.posted if str(m["text"]).startswith(READ)]


async def test_a_read_line_owed_when_serve_is_killed_is_said_once_by_the_next_process(
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
            await stub.fail_all("500", "chat.postMessage")  # the line cannot be said now
            assert await post(session, events, reply(0), JSON) == 200
            await until(lambda: RECORDED in read_log(tmp_path / "first.log"), 30, "recorded")
            await until(lambda: _line_failed(tmp_path), 30, "the line tried, failed, owed")
        finally:
            first.send_signal(signal.SIGKILL)
            await asyncio.wait_for(first.wait(), 30)
        assert first.returncode == -signal.SIGKILL
        assert _lines(stub) == []  # owed, never said

        await stub.restore()
        second = await start_logged(environ, tmp_path, "second")
        try:
            await wait_healthy(session, health, second)
            await until(lambda: _lines(stub), 20, "the line said by the second process")
            await asyncio.sleep(2)  # several deliveries of the outbox later: still once
        finally:
            await stop(second)
    [line] = _lines(stub)
    assert line["thread_ts"] == thread_of(0)
    assert "Traceback" not in read_log(tmp_path / "second.log")
