"""Two ``python -m bot serve`` instances on a PostgreSQL cluster of their own, under a burst of
answers (``concurrency`` at a time over both), while the cluster is restarted (a fast stop and a
start) and then frozen (SIGSTOP of the postmaster and its backends) and thawed. What Slack was
answered, who was told to try again and answered again, how every run ended and how long after
the thaw everything owed was delivered. Used by ``tests/slack/test_outages_postgres.py`` and
``python -m tests.benchmarks.outage_runs postgres``.

An answer the database refused at once is answered 200 and told to try again (a click or a
thread reply ephemerally, a modal in its errors): the person answers again (``Retry``), as after
an error Slack showed them (non-200: sent again once the database is back).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from bot.core.enums import ExecutionStatus, PauseStatus
from bot.security.codec import EncryptingCodec
from bot.security.keys import parse_key_ring
from bot.store.database import Database
from bot.store.sql import SqlStore
from channels.slack.late_answers import NOT_RECORDED
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.own_postgres import OwnPostgres
from tests.ports import free_port
from tests.slack.burst import (
    DESK,
    INTERRUPTED,
    JSON,
    answers_for,
    env,
    mention,
    pause_of,
    post,
    reply,
    thread_of,
)
from tests.slack.chaos import ChaosReport, _until_every_question_is_sent, _until_every_run_ended
from tests.slack.conftest import signed_headers
from tests.slack.outages import (
    FAST,
    _finals,
    questions_closed,
    questions_of,
    start_logged,
    still_asking,
    stop,
    until,
)
from tests.slack.stub import TEAM, Call, SlackStub
from tests.slack.test_serve import wait_healthy

SLACK_RETRIES = (60.0, 240.0)
"""After its immediate retry, Slack delivers an event again a minute, then five minutes after
the first delivery."""


@dataclass
class DatabaseOutageReport:
    requests: int
    asked: Counter[str] = field(default_factory=Counter)  # approval posts by pause
    statuses: Counter[int | None] = field(default_factory=Counter)  # every answer sent
    acknowledged: int = 0  # answers Slack got 200 for
    told_to_retry: int = 0  # answered 200 and told "try again" (nothing recorded)
    answered_again: int = 0  # sent again: told to retry, or not acknowledged
    told_unmatched: int = 0  # "try again" said to nobody the run could answer for (must be 0)
    executions: Counter[ExecutionStatus] = field(default_factory=Counter)
    pauses: Counter[PauseStatus] = field(default_factory=Counter)
    finals: Counter[str] = field(default_factory=Counter)  # ends said, by thread
    texts: list[str] = field(default_factory=list)  # the ends said
    updated: int = 0  # question messages that lost their buttons
    seconds_to_catch_up: float = 0.0  # from the thaw until every end said, every message updated
    last_answered_again: float = 0.0  # from the thaw until the last "try again" was answered
    phases: dict[str, float] = field(default_factory=dict)  # seconds after the thaw, by phase
    not_acknowledged: Counter[str] = field(default_factory=Counter)  # by kind and status
    ends_said: list[tuple[float, int]] = field(default_factory=list)  # (after the thaw, how many)
    ready_after: list[int] = field(default_factory=list)  # /readyz of each instance at the end
    log: str = ""

    @property
    def refunds_run(self) -> int:
        return sum(t.count("refunded") for t in self.texts)

    @property
    def expenses_run(self) -> int:
        return sum(t.count("booked") for t in self.texts)

    @property
    def run_twice(self) -> int:
        return sum(t.count("refunded") > 1 or t.count("booked") > 1 for t in self.texts)

    @property
    def interrupted(self) -> int:
        """Requests whose approved tool the model was told "may or may not have run"."""
        return sum(INTERRUPTED in t for t in self.texts)


async def restart_and_freeze(
    stub: SlackStub,
    cluster: OwnPostgres,
    folder: Path,
    *,
    requests: int,
    concurrency: int,
    frozen_seconds: float,
) -> DatabaseOutageReport:
    url = cluster.url
    ports = [free_port(), free_port()]
    processes = [
        await start_logged({**env(stub, port, url), **FAST}, folder, f"instance-{n}")
        for n, port in enumerate(ports)
    ]
    urls = [f"http://127.0.0.1:{port}/slack/events" for port in ports]
    report = DatabaseOutageReport(requests=requests)
    timeout = aiohttp.ClientTimeout(total=60)
    connector = aiohttp.TCPConnector(limit=2 * concurrency)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        try:
            for port, process in zip(ports, processes, strict=True):
                await wait_healthy(session, f"http://127.0.0.1:{port}/healthz", process)
            for i in range(requests):
                assert await post(session, urls[i % 2], mention(i), JSON) == 200
            await until(lambda: len(set(questions_of(stub))) >= 2 * requests, 300, "asked")
            pause_ids = sorted(set(questions_of(stub)))
            await _until_every_question_is_sent(url, pause_ids)
            refunds = [
                q
                for q in stub.of("chat.postMessage")
                if q.payload.get("channel") == DESK and q.blocks()
            ]
            answers = answers_for(refunds, requests, hooks=f"{stub.root}/hooks")
            retry = Retry(stub, answers, [pause_of(q) for q in refunds], url)
            gate = asyncio.Semaphore(concurrency)
            not_acknowledged: list[tuple[str, str]] = []

            async def answer(n: int, body: str, kind: str) -> None:
                async with gate:
                    try:
                        status, said = await post_said(session, urls[n % 2], body, kind)
                    except (aiohttp.ClientError, TimeoutError):
                        status, said = None, ""
                    report.statuses[status] += 1
                    report.acknowledged += status == 200
                    if status != 200:  # the person saw an error: they answer again
                        not_acknowledged.append((body, kind))
                        report.not_acknowledged[f"{kind.split('/')[-1]} {status}"] += 1
                    elif NOT_RECORDED in said:  # a modal kept open: "try again"
                        retry.told[n] += 1

            thawed = asyncio.get_running_loop().create_future()
            caught_up = asyncio.get_running_loop().create_future()

            async def watch() -> None:
                """When everything owed was delivered: every end said, every message updated
                (and how many ends were said, second by second, meanwhile)."""
                said = -1

                def done() -> bool:
                    nonlocal said
                    ends = len(_finals(stub))
                    if ends != said:
                        said = ends
                        report.ends_said.append((since(thawed), ends))
                    return ends >= requests and questions_closed(stub) >= 2 * requests

                await until(done, 600, "caught up")
                caught_up.set_result(time.monotonic())

            async def outages() -> None:
                await asyncio.sleep(0.3)
                await asyncio.to_thread(cluster.restart)
                await asyncio.sleep(1.0)
                frozen = cluster.freeze()
                await asyncio.sleep(frozen_seconds)
                cluster.thaw(frozen)
                thawed.set_result(time.monotonic())
                watcher.append(asyncio.ensure_future(watch()))

            watcher: list[asyncio.Future[None]] = []
            third = len(answers) // 3
            chaos = asyncio.ensure_future(outages())
            await asyncio.gather(*(answer(n, b, k) for n, (b, k) in enumerate(answers[:third])))
            await asyncio.gather(
                *(answer(n, b, k) for n, (b, k) in enumerate(answers[third:], third))
            )
            await chaos
            report.phases["answers sent"] = since(thawed)
            # once the database is back, an answer Slack saw fail is sent again at once: Slack
            # retries an event at once (then a minute, then five minutes later: a retry that
            # meets its delivery's claim is answered 503), a person clicks or submits again
            resent: list[asyncio.Future[None]] = []

            async def send_again(body: str, kind: str) -> None:
                waits = SLACK_RETRIES if kind == JSON else (1.0,) * 30
                for wait in (0.0, *waits):
                    await asyncio.sleep(wait)
                    if await post(session, urls[len(resent) % 2], body, kind) == 200:
                        return

            def resend_refused() -> None:
                while not_acknowledged:
                    report.answered_again += 1
                    resent.append(asyncio.ensure_future(send_again(*not_acknowledged.pop())))

            resend_refused()
            # told to try again (ephemerally, or in the modal): they answer again, until nobody
            # has been told so for a while
            quiet = 0
            while quiet < 8:
                again = await retry.owed()
                quiet = 0 if again else quiet + 1
                report.answered_again += len(again)
                if again:
                    report.last_answered_again = time.monotonic() - thawed.result()
                await asyncio.gather(*(answer(n, body, kind) for n, body, kind in again))
                resend_refused()
                await asyncio.sleep(1)
            report.phases["no more told to retry"] = since(thawed)
            await asyncio.gather(*resent)
            report.phases["not acknowledged sent again"] = since(thawed)
            runs = ChaosReport(finals=[])
            await _until_every_run_ended(url, pause_ids, runs)
            report.phases["every run ended"] = since(thawed)
            report.executions, report.pauses = runs.executions, runs.pauses
            try:
                await until(lambda: len(_finals(stub)) >= requests, 120, "every end said")
                try:
                    await until(
                        lambda: questions_closed(stub) >= 2 * requests,
                        60,
                        "every question updated",
                    )
                except AssertionError as error:
                    raise AssertionError(f"{error}: still asking {still_asking(stub)}") from None
                await asyncio.wait_for(caught_up, 10)
                report.seconds_to_catch_up = caught_up.result() - thawed.result()
            finally:
                for task in watcher:
                    task.cancel()
            report.told_to_retry = sum(retry.told.values()) + len(retry.told_after_the_ack())
            report.told_unmatched = sum(
                1 for c in stub.calls if str(c.payload.get("text")) == NOT_RECORDED
            ) - len(retry.told_after_the_ack())
            for port in ports:  # both instances recovered without a restart
                async with session.get(f"http://127.0.0.1:{port}/readyz") as ready:
                    report.ready_after.append(ready.status)
            await asyncio.sleep(1)  # a duplicate would come now
        finally:
            for process in processes:
                await stop(process)
    report.asked = Counter(questions_of(stub))
    finals = _finals(stub)
    report.finals = Counter(thread for thread, _ in finals)
    report.texts = [text for _, text in finals]
    report.updated = questions_closed(stub)
    report.log = "".join(
        (folder / f"instance-{n}.log").read_text(errors="replace") for n in range(len(ports))
    )
    return report


def since(moment: asyncio.Future[float]) -> float:
    """Seconds from ``moment`` (``nan`` before it)."""
    return time.monotonic() - moment.result() if moment.done() else float("nan")


async def post_said(
    session: aiohttp.ClientSession, url: str, body: str, kind: str
) -> tuple[int, str]:
    """``post``, with what Slack was answered (a modal's errors)."""
    headers = {"Content-Type": kind, **signed_headers(body)}
    async with session.post(url, data=body.encode(), headers=headers) as response:
        return response.status, await response.text()


class Retry:
    """Who was told "try again" (``NOT_RECORDED``) and has not answered again yet: a modal by
    its errors or its ``response_url`` (``<hooks>/answer-<n>``), a thread reply by its thread,
    and a click (told ephemerally in the desk channel, which names no click) by its question
    still waiting: as many clicks again as the desk was told "try again"."""

    def __init__(
        self, stub: SlackStub, answers: list[tuple[str, str]], refunds: list[str], url: str
    ):
        self._stub = stub
        self._answers = answers
        self._refunds = refunds  # the pause each click or modal (the first answers) answers
        self._url = url
        replies_from = len(refunds)
        self._replies_from = replies_from
        self._threads = {thread_of(i): replies_from + i for i in range(len(answers) - replies_from)}
        self.told: Counter[int] = Counter()  # told in the answer itself (a modal's errors)
        self._sent: Counter[int] = Counter()
        self._desk_sent = 0

    async def owed(self) -> list[tuple[int, str, str]]:
        told = self.told + Counter(n for n in self.told_after_the_ack() if n >= 0)
        owed = []
        for n, times in told.items():
            while self._sent[n] < times:
                self._sent[n] += 1
                owed.append((n, *self._again(n, self._sent[n])))
        desk = sum(1 for n in self.told_after_the_ack() if n < 0)
        if desk > self._desk_sent:
            for n in await self._waiting():
                if self._desk_sent >= desk:
                    break
                self._desk_sent += 1
                owed.append((n, *self._answers[n]))
        return owed

    def told_after_the_ack(self) -> list[int]:
        """The answer of each "try again" said after an ack (ephemerally); -1: a click's."""
        told: list[int] = []
        for call in self._stub.calls:
            if str(call.payload.get("text")) == NOT_RECORDED:
                n = self._who(call)
                if n is not None:
                    told.append(n)
        return told

    def _who(self, call: Call) -> int | None:
        if call.method == "response_url" and "/answer-" in call.path:
            return int(call.path.rsplit("-", 1)[1])
        if call.method == "chat.postEphemeral":
            thread = call.payload.get("thread_ts")
            if thread is None and call.payload.get("channel") == DESK:
                return -1
            return self._threads.get(str(thread))
        return None

    async def _waiting(self) -> list[int]:
        """The clicks (even answers) whose question still waits."""
        database = Database.open(self._url)
        store = SqlStore(database, EncryptingCodec(parse_key_ring(TEST_ENCRYPTION_KEYS)))
        try:
            waiting = []
            for n in range(0, self._replies_from, 2):
                record = await store.find(TEAM, self._refunds[n])
                if record is not None and record.status is PauseStatus.PENDING:
                    waiting.append(n)
            return waiting
        finally:
            await database.close()

    def _again(self, n: int, times: int) -> tuple[str, str]:
        if n >= self._replies_from:  # written again: a new message
            return reply(n - self._replies_from, again=times), JSON
        return self._answers[n]
