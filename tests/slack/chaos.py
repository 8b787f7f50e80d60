"""Two ``python -m bot serve`` instances on one PostgreSQL database share a burst of Slack
answers; one is SIGKILLed halfway through. A request the dead instance never answered is sent
again to the live one, as Slack retries what it was not acknowledged; what it answered 200 is
never sent again. Every answer must be continued once (by the live instance's own work or its
recovery sweep) and the live instance must never answer 5xx."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from bot.core.enums import ExecutionStatus, PauseResolution, PauseStatus
from bot.security.codec import EncryptingCodec
from bot.security.keys import parse_key_ring
from bot.store.database import Database
from bot.store.sql import SqlStore
from channels.slack.middlewares import EVENT_CLAIM_TTL
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.ports import free_port
from tests.slack.burst import (
    DESK,
    JSON,
    answers_for,
    env,
    mention,
    pause_of,
    post,
    wait_for_finals,
    wait_for_questions,
)
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_serve import start_serve, stop, wait_healthy

CONCURRENCY = 50


@dataclass
class ChaosReport:
    finals: list[tuple[str, str]]
    pauses: Counter[PauseStatus] = field(default_factory=Counter)
    executions: Counter[ExecutionStatus] = field(default_factory=Counter)
    audit_entries: Counter[PauseResolution] = field(default_factory=Counter)
    ran: int = 0  # audit entries saying what an approved tool ran with
    live_statuses: Counter[int] = field(default_factory=Counter)
    live_answers: int = 0
    acked_by_the_dead: int = 0
    retried_on_the_live: int = 0
    recovered: int = 0
    dead_said: str = ""
    seconds_to_finish: float = 0.0


async def two_instances_one_killed(
    stub: SlackStub, url: str, folder: Path, *, requests: int
) -> ChaosReport:
    ports = [free_port(), free_port()]
    processes = [await start_serve(env(stub, port, url), folder) for port in ports]
    dead, live = processes
    urls = [f"http://127.0.0.1:{port}/slack/events" for port in ports]
    report = ChaosReport(finals=[])
    connector = aiohttp.TCPConnector(limit=CONCURRENCY * 2)
    async with aiohttp.ClientSession(connector=connector) as session:
        try:
            for port, process in zip(ports, processes, strict=True):
                await wait_healthy(session, f"http://127.0.0.1:{port}/healthz", process)
            for i in range(requests):
                assert await post(session, urls[i % 2], mention(i), JSON) == 200
            questions = await wait_for_questions(stub, 2 * requests)
            # asked means posted *and* its reference kept (a reply in its thread finds it)
            await _until_every_question_is_sent(url, [pause_of(q) for q in questions])
            refunds = [q for q in questions if q.payload["channel"] == DESK]
            answers = answers_for(refunds, requests)
            gate = asyncio.Semaphore(CONCURRENCY)
            killed = asyncio.Event()
            started = time.monotonic()

            half = len(answers) // 2

            async def answer(n: int, body: str, kind: str) -> None:
                async with gate:
                    if n % 2 == 0 and not killed.is_set():
                        try:
                            status = await post(session, urls[0], body, kind)
                        except aiohttp.ClientError:
                            status = None  # the instance died with it: not acknowledged
                        if status == 200:
                            report.acked_by_the_dead += 1
                            kill_at_half()
                            return
                        report.retried_on_the_live += 1
                    status = await post(session, urls[1], body, kind)
                    report.live_statuses[status] += 1
                    if status != 200:  # the dead one's claim still fresh: Slack retries later
                        unanswered.append((body, kind))
                    report.live_answers += 1
                    kill_at_half()

            def kill_at_half() -> None:
                if not killed.is_set() and report.acked_by_the_dead + report.live_answers >= half:
                    dead.send_signal(signal.SIGKILL)
                    killed.set()

            unanswered: list[tuple[str, str]] = []
            await asyncio.gather(*(answer(n, b, k) for n, (b, k) in enumerate(answers)))
            # Slack's next retry, a minute later: an event whose delivery died before its ack
            # is handled then (its first retry was answered 503 while the claim was fresh)
            await asyncio.sleep(EVENT_CLAIM_TTL.total_seconds() + 1)
            for body, kind in unanswered:
                report.live_statuses[await post(session, urls[1], body, kind)] += 1
                report.live_answers += 1
            await dead.wait()
            if dead.stderr is not None:
                report.dead_said = (await dead.stderr.read()).decode(errors="replace")
            pause_ids = [pause_of(q) for q in questions]
            await _until_every_run_ended(url, pause_ids, report)
            report.seconds_to_finish = time.monotonic() - started
            with contextlib.suppress(AssertionError):  # what Slack was told, as far as it got
                report.finals = await wait_for_finals(stub, requests, seconds=5)
        finally:
            if dead.returncode is None:
                dead.send_signal(signal.SIGKILL)
                await dead.wait()
            _, _, err = await stop(live)
    report.recovered = err.count("recovery: continuing execution")
    return report


async def _until_every_run_ended(url: str, pause_ids: list[str], report: ChaosReport) -> None:
    """Read the database until every run ended (or 90 s), and what its records say."""
    database = Database.open(url)
    store = SqlStore(database, EncryptingCodec(parse_key_ring(TEST_ENCRYPTION_KEYS)))
    try:
        for _ in range(900):
            records = [await store.find(TEAM, pause_id) for pause_id in pause_ids]
            roots = {r.root_execution_id for r in records if r is not None}
            rows = [await store.get(root) for root in roots]
            if all(row is not None and row.status.ended for row in rows):
                break
            await asyncio.sleep(0.1)
        records = [await store.find(TEAM, pause_id) for pause_id in pause_ids]  # as they ended
        report.pauses = Counter(r.status for r in records if r is not None)
        report.executions = Counter(row.status for row in rows if row is not None)
        for root in roots:
            for entry in await store.find_pause_answers(TEAM, root):
                report.audit_entries[entry.resolution] += 1
                report.ran += entry.ran_with is not None
    finally:
        await database.close()


async def _until_every_question_is_sent(url: str, pause_ids: list[str]) -> None:
    database = Database.open(url)
    store = SqlStore(database, EncryptingCodec(parse_key_ring(TEST_ENCRYPTION_KEYS)))
    try:
        for _ in range(300):
            records = [await store.find(TEAM, pause_id) for pause_id in pause_ids]
            if all(r is not None and r.is_sent for r in records):
                return
            await asyncio.sleep(0.1)
        raise AssertionError("the questions were posted but not all recorded as sent")
    finally:
        await database.close()
