"""Slack events with Slack's retries on a SQLite file: no 500, no freeze, each event once.

    python -m tests.benchmarks.slack_events_retries [--events 100] [--concurrency 25]

The bot (the office App on a SQLite file) runs in its own process on real loopback HTTP, its
Web API calls going to the stub in this process. Each of ``--events`` signed events (half
``app_mention``: each starts the entry workflow and answers in its thread; half thread replies
in a thread where nothing waits: each reads the Slack message references) is sent as Slack
does when it retries: the original, then re-sends of the same ``event_id`` with
``X-Slack-Retry-Num`` 1..3, each a few milliseconds after the previous one. Meanwhile
``/healthz`` is polled every 10 ms. It prints the total time, the status counts, the latency
of the event requests, the slowest ``/healthz`` answer, and how many mentions were answered
(each must be answered exactly once). Exit status 0 when no answer was a 5xx, ``/healthz``
never took over a second, and every mention was answered once.

Importable too: ``await run(events=..., concurrency=...)`` returns a :class:`Report`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from slack_sdk.signature import SignatureVerifier

SECRET = "benchmark-signing-secret"
TEAM = "T0TEAM"
USER = "U0OWNER"
CHANNEL = "C0GENERAL"
RETRIES = 3
HEALTH_EVERY_S = 0.01
HEALTH_LIMIT_MS = 1000.0
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Report:
    events: int
    requests: int
    seconds: float
    statuses: dict[int, int]
    latencies_ms: list[float]
    health_ms: list[float]
    health_statuses: dict[int, int]
    mentions: int
    answered: Counter[str]

    def percentile(self, values: list[float], p: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]

    @property
    def answered_once(self) -> int:
        return sum(1 for count in self.answered.values() if count == 1)

    @property
    def met(self) -> bool:
        return (
            all(status < 500 for status in self.statuses)
            and max(self.health_ms) < HEALTH_LIMIT_MS
            and self.answered_once == self.mentions
            and sum(self.answered.values()) == self.mentions
        )

    def lines(self) -> list[str]:
        lat, health = self.latencies_ms, self.health_ms
        return [
            f"{self.events} events, {self.requests} requests (each event + {RETRIES} retries)",
            f"total time: {self.seconds:.2f} s",
            f"statuses: {dict(sorted(self.statuses.items()))}",
            f"event latency ms: p50 {self.percentile(lat, 50):.1f}  "
            f"p99 {self.percentile(lat, 99):.1f}  max {max(lat):.1f}",
            f"/healthz during the load: {len(health)} polls, statuses "
            f"{dict(sorted(self.health_statuses.items()))}, p50 {self.percentile(health, 50):.1f} "
            f"ms, max {max(health):.1f} ms",
            f"mentions answered: {self.answered_once} of {self.mentions} exactly once, "
            f"{sum(self.answered.values())} answers in all",
            "met" if self.met else "NOT met",
        ]


# --------------------------------------------------------------------------------------------
# The bot (its own process).


def _serve(api_url: str, events: int, out: Queue[Any], stop: Any) -> None:
    try:
        asyncio.run(_serve_async(api_url, events, out, stop))
    except BaseException as error:  # tell the parent instead of leaving it waiting
        out.put(("error", f"{type(error).__name__}: {error}"))
        raise


async def _serve_async(api_url: str, events: int, out: Queue[Any], stop: Any) -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bot import App, Settings
    from bot.testing import mock_llm
    from channels.slack import SlackBot, SlackSettings
    from tests.office import Ledger
    from tests.slack.office import SlackOfficeAgent, SlackOfficeApplication

    folder = tempfile.mkdtemp(prefix="countersign-bench-")
    llm = mock_llm(SlackOfficeAgent)
    llm.then_return(*([f"answer {index}" for index in range(events)]))
    app = await App.create(
        SlackOfficeApplication,
        database_url=f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}",
        settings=Settings(),
        services={Ledger: Ledger()},
    )
    bot = SlackBot(
        app, SlackSettings(bot_token="xoxb-bench", signing_secret=SECRET, api_url=api_url)
    )
    await bot.start()
    runner = web.AppRunner(bot.web_app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    gc.freeze()  # as ``python -m bot serve`` does once started
    out.put(("ready", runner.addresses[0][1]))
    await asyncio.get_running_loop().run_in_executor(None, stop.wait)
    await runner.cleanup()
    await bot.close()
    await app.close()


# --------------------------------------------------------------------------------------------
# The load.


def event_body(index: int) -> str:
    ts = f"1700000300.{index:06d}"
    event: dict[str, Any]
    if index % 2 == 0:
        event = {
            "type": "app_mention",
            "user": USER,
            "text": f"<@U0BOT> question {index}",
            "channel": CHANNEL,
            "ts": ts,
        }
    else:
        event = {
            "type": "message",
            "user": USER,
            "text": f"a reply {index}",
            "channel": CHANNEL,
            "channel_type": "channel",
            "ts": ts,
            "thread_ts": "1690000000.000001",
        }
    return json.dumps(
        {
            "token": "legacy",
            "team_id": TEAM,
            "api_app_id": "A0APP",
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{index:08d}",
            "event_time": 1700000000,
            "authorizations": [{"team_id": TEAM, "user_id": "U0BOT", "is_bot": True}],
        }
    )


def signed(body: str, retry: int) -> dict[str, str]:
    stamp = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=stamp, body=body)
    assert signature is not None  # slack_sdk types it Optional: None only without a body
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature,
    }
    if retry:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    return headers


async def run(*, events: int, concurrency: int, seed: int = 7) -> Report:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.slack.stub import SlackStub

    stub = SlackStub()
    await stub.start()
    context = multiprocessing.get_context("spawn")
    out: Queue[Any] = context.Queue()
    stop = context.Event()
    process = context.Process(target=_serve, args=(stub.api_url, events, out, stop), daemon=True)
    process.start()
    try:
        message = await asyncio.get_running_loop().run_in_executor(None, out.get)
        if message[0] != "ready":
            raise RuntimeError(f"the bot failed: {message[1]}")
        return await _load(message[1], stub, events, concurrency, random.Random(seed))
    finally:
        stop.set()
        await asyncio.get_running_loop().run_in_executor(None, process.join, 60)
        await stub.close()


async def _load(port: int, stub: Any, events: int, concurrency: int, rng: random.Random) -> Report:
    base = f"http://127.0.0.1:{port}"
    statuses: Counter[int] = Counter()
    latencies: list[float] = []
    health: list[float] = []
    health_statuses: Counter[int] = Counter()
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(events):
        queue.put_nowait(index)
    done = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=concurrency * (RETRIES + 1) + 2)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def send(body: str, retry: int) -> None:
            await asyncio.sleep(retry * rng.uniform(0.0, 0.02))
            started = time.perf_counter()
            async with session.post(
                f"{base}/slack/events", data=body, headers=signed(body, retry)
            ) as response:
                await response.read()
                statuses[response.status] += 1
            latencies.append((time.perf_counter() - started) * 1000)

        async def worker() -> None:
            while not queue.empty():
                body = event_body(queue.get_nowait())
                await asyncio.gather(*(send(body, retry) for retry in range(RETRIES + 1)))

        async def poll_health() -> None:
            while not done.is_set():
                started = time.perf_counter()
                async with session.get(f"{base}/healthz") as response:
                    await response.read()
                    health_statuses[response.status] += 1
                health.append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(HEALTH_EVERY_S)

        poller = asyncio.create_task(poll_health())
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        seconds = time.perf_counter() - started
        mentions = (events + 1) // 2
        with contextlib.suppress(TimeoutError):
            await stub.wait_for("chat.postMessage", mentions, timeout=60)
        await asyncio.sleep(0.5)  # an event handled twice would answer twice: wait for it
        done.set()
        await poller
    answered = Counter(str(call.payload.get("thread_ts")) for call in stub.of("chat.postMessage"))
    return Report(
        events=events,
        requests=events * (RETRIES + 1),
        seconds=seconds,
        statuses=dict(statuses),
        latencies_ms=latencies,
        health_ms=health,
        health_statuses=dict(health_statuses),
        mentions=mentions,
        answered=answered,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.slack_events_retries")
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=25)
    args = parser.parse_args(argv)
    report = asyncio.run(run(events=args.events, concurrency=args.concurrency))
    print(f"bot on a SQLite file, loopback HTTP, {args.concurrency} events at a time")
    for line in report.lines():
        print(line)
    return 0 if report.met else 1


if __name__ == "__main__":
    raise SystemExit(main())
