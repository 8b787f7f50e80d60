"""How fast the bot acks button clicks, next to a bare Bolt app that only acks.

    python -m tests.benchmarks.slack_ack --clicks 500 --concurrency 50 [--home]

Two servers run in their own processes, each on real loopback HTTP: the bot (the office App on
a SQLite file, ``--clicks`` pauses asked beforehand, one signed Approve click per pause by an
approver: each click's answer is recorded, then acked; after the ack it resumes its execution,
runs the tool and updates the message) and a bare ``AsyncApp`` whose only listener acks. This
process sends the signed clicks, ``--concurrency`` at a time, and fakes the Slack Web API. It
prints clicks/s for both, the ratio, the p50/p99 ack latency, and how long the bot took to
finish the resumes.

``--home``: the approver has opened their App Home, so each question their click closes
republishes it after the ack (work that can wait, beside each click's continuation).

Importable too: ``await run(clicks=..., concurrency=...)`` returns a :class:`Report`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import multiprocessing
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
from aiohttp import web
from slack_sdk.signature import SignatureVerifier

SECRET = "benchmark-signing-secret"
TEAM = "T0TEAM"
APPROVER = "U0MANAGER"
APPROVE = "countersign_approve"
TARGET_P99_MS = 100.0
TARGET_CONTINUED_P50_MS = 500.0
WARM_UP = 10


@dataclass(frozen=True, slots=True)
class Run:
    """One server's figures."""

    name: str
    clicks: int
    seconds: float
    latencies_ms: list[float]
    statuses: dict[int, int]

    @property
    def per_second(self) -> float:
        return self.clicks / self.seconds

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


@dataclass(frozen=True, slots=True)
class Report:
    bare: Run
    bot: Run
    resumes_done_seconds: float
    resumes_done: int
    continued_ms: list[float]
    """Each click's time from its request sent to its run continued (the resume event, told
    first: before the bot's own handler updates the message)."""
    told_ms: list[float]
    """Each click's time from its request sent to the bot's resume handler done (its message
    updated, the run's end said in its thread)."""

    def continued(self, p: float) -> float:
        return _percentile(self.continued_ms, p)

    def told(self, p: float) -> float:
        return _percentile(self.told_ms, p)

    @property
    def ratio(self) -> float:
        return self.bot.per_second / self.bare.per_second

    @property
    def met(self) -> bool:
        return (
            self.bot.percentile(99) < TARGET_P99_MS
            and self.continued(50) < TARGET_CONTINUED_P50_MS
            and len(self.continued_ms) == self.bot.clicks
        )

    def lines(self) -> list[str]:
        rows = [
            f"{'server':<6} {'clicks/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}  statuses",
        ]
        for run in (self.bare, self.bot):
            rows.append(
                f"{run.name:<6} {run.per_second:>9.1f} {run.percentile(50):>8.1f} "
                f"{run.percentile(99):>8.1f} {max(run.latencies_ms):>8.1f}  {run.statuses}"
            )
        rows.append(
            f"ratio bot/bare: {self.ratio:.2f} (the bot records each answer before its 200, the "
            f"bare app records nothing); bot p99 ack "
            f"{self.bot.percentile(99):.1f} ms (target < {TARGET_P99_MS:.0f} ms): "
            f"{'met' if self.met else 'NOT met'}"
        )
        rows.append(
            f"bot background work: {self.resumes_done}/{self.bot.clicks} resumes told "
            f"(message updated, end said) {self.resumes_done_seconds:.2f} s after the first click"
        )
        rows.append(
            f"click -> continued ({len(self.continued_ms)} clicks): p50 {self.continued(50):.0f} "
            f"ms, p90 {self.continued(90):.0f} ms, p99 {self.continued(99):.0f} ms "
            f"(target p50 < {TARGET_CONTINUED_P50_MS:.0f} ms)"
        )
        rows.append(
            f"click -> told      ({len(self.told_ms)} clicks): p50 {self.told(50):.0f} "
            f"ms, p90 {self.told(90):.0f} ms, p99 {self.told(99):.0f} ms "
            "(message updated and the run's end said)"
        )
        return rows


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values) or [float("nan")]
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


# --------------------------------------------------------------------------------------------
# The servers (each in its own process).


def _serve(kind: str, api_url: str, clicks: int, out: Queue[Any], stop: Any) -> None:
    try:
        asyncio.run(_serve_async(kind, api_url, clicks, out, stop))
    except BaseException as error:  # tell the parent instead of leaving it waiting
        out.put(("error", f"{type(error).__name__}: {error}"))
        raise


async def _serve_async(kind: str, api_url: str, clicks: int, out: Queue[Any], stop: Any) -> None:
    times: dict[str, dict[str, float]] = {"continued": {}, "told": {}}
    if kind == "bare":
        web_app, pause_ids, settle, close = await _bare(api_url, clicks)
    else:
        web_app, pause_ids, settle, close = await _bot(api_url, clicks, times)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    gc.freeze()  # as ``python -m bot serve`` does once started (both servers alike)
    out.put(("ready", port, pause_ids))
    await asyncio.get_running_loop().run_in_executor(None, stop.wait)
    # the work after the acks finishes first: the load's finish line (every message updated)
    # can be crossed before the last resume is told (the outbox may show an answer's outcome
    # before its run continues), and the times sent early missed those clicks
    await settle()
    out.put(("times", times))  # perf_counter: CLOCK_MONOTONIC, one clock machine-wide
    await runner.cleanup()
    await close()


async def _bare(api_url: str, clicks: int) -> tuple[web.Application, list[str], Any, Any]:
    from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    bolt = AsyncApp(
        client=AsyncWebClient(token="xoxb-bench", base_url=api_url), signing_secret=SECRET
    )

    async def only_ack(ack: Any) -> None:
        await ack()

    bolt.action(re.compile(".*"))(only_ack)

    async def events(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await bolt.async_dispatch(await to_bolt_request(request)))

    app = web.Application()
    app.router.add_post("/slack/events", events)

    async def close() -> None:
        return None

    return app, ["0" * 32] * clicks, close, close


async def _bot(
    api_url: str, clicks: int, times: dict[str, dict[str, float]]
) -> tuple[web.Application, list[str], Any, Any]:
    from bot import App, Settings, WorkflowStartText
    from bot.testing import call_tool, mock_llm
    from channels.slack import SlackBot, SlackSettings
    from tests.office import Ledger
    from tests.slack.office import (
        RefundCardTool,
        SlackOfficeAgent,
        SlackOfficeApplication,
        SlackOfficeWorkflow,
    )

    folder = tempfile.mkdtemp(prefix="countersign-bench-")
    llm = mock_llm(SlackOfficeAgent)
    for index in range(clicks):
        llm.then_return(call_tool(RefundCardTool, {"order_id": str(index), "amount": 1.0}))
    llm.then_return(*(["done"] * clicks))
    app = await App.create(
        SlackOfficeApplication,
        database_url=f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}",
        settings=Settings(),
        services={Ledger: Ledger()},
    )

    def at(which: str) -> Any:
        def resumed(event: Any) -> None:
            for pause in event.answered:
                times[which].setdefault(pause.pause_id, time.perf_counter())

        return resumed

    # handlers are told in the order they were added: "continued" before the bot's own (which
    # updates the message, then says the run's end in its thread), "told" after it
    app.on_execution_resume(at("continued"))
    bot = SlackBot(
        app, SlackSettings(bot_token="xoxb-bench", signing_secret=SECRET, api_url=api_url)
    )
    app.on_execution_resume(at("told"))
    await bot.start()
    pause_ids: list[str] = []
    for index in range(clicks):
        result = await app.execute(
            SlackOfficeWorkflow,
            WorkflowStartText(text=f"refund {index}"),
            tenant_id=TEAM,
            owner_id="U0OWNER",
        )
        if not result.pending:
            raise RuntimeError("the benchmark's execution did not pause")
    for pending in await app.list_pending(
        tenant_id=TEAM, include_channel_pause_ids=True, limit=clicks
    ):
        assert pending.pause_id is not None
        pause_ids.append(pending.pause_id)

    async def settle() -> None:
        await asyncio.wait_for(bot.wait_idle(), timeout=300)

    async def close() -> None:
        await bot.close()
        await app.close()

    return bot.web_app(), pause_ids, settle, close


# --------------------------------------------------------------------------------------------
# The load.


def click_body(pause_id: str) -> str:
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM},
        "user": {"id": APPROVER, "team_id": TEAM},
        "container": {"type": "message", "channel_id": "C0APPROVALS", "is_ephemeral": False},
        "channel": {"id": "C0APPROVALS"},
        "trigger_id": "trigger",
        "actions": [{"type": "button", "action_id": APPROVE, "value": pause_id}],
    }
    return f"payload={quote(json.dumps(payload))}"


def home_opened() -> str:
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": TEAM,
            "event_id": "Ev0HOMEOPENED",
            "event": {"type": "app_home_opened", "user": APPROVER, "tab": "home"},
        }
    )


def signed(body: str, kind: str = "application/x-www-form-urlencoded") -> dict[str, str]:
    stamp = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=stamp, body=body)
    assert signature is not None  # slack_sdk types it Optional: None only without a body
    return {
        "Content-Type": kind,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature,
    }


async def load(
    name: str,
    port: int,
    bodies: Sequence[str],
    concurrency: int,
    sent: dict[str, float] | None = None,
) -> Run:
    """Send ``bodies``, ``concurrency`` at a time; ``sent``: when each was sent, by body."""
    url = f"http://127.0.0.1:{port}/slack/events"
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    queue: asyncio.Queue[str] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            while not queue.empty():
                body = queue.get_nowait()
                headers = signed(body)
                started = time.perf_counter()
                if sent is not None:
                    sent[body] = started
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                    statuses[response.status] = statuses.get(response.status, 0) + 1
                latencies.append((time.perf_counter() - started) * 1000)

        # warm-up: Bolt's first request calls auth.test; connections open; the work behind
        # these clicks (an unknown request) settles before the timed clicks
        warm_up = click_body("f" * 32)
        for _ in range(WARM_UP):
            async with session.post(url, data=warm_up, headers=signed(warm_up)) as response:
                await response.read()
        await asyncio.sleep(0.5)
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        seconds = time.perf_counter() - started
    return Run(name, len(bodies), seconds, latencies, statuses)


ROOT = Path(__file__).resolve().parents[2]


async def run(*, clicks: int, concurrency: int, home: bool = False) -> Report:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.slack.stub import SlackStub

    stub = SlackStub()
    await stub.start()
    context = multiprocessing.get_context("spawn")
    try:
        servers = {}
        for kind in ("bare", "bot"):
            out: Queue[Any] = context.Queue()
            stop = context.Event()
            process = context.Process(
                target=_serve,
                args=(kind, stub.api_url, clicks, out, stop),
                daemon=True,
            )
            process.start()
            servers[kind] = (process, out, stop)
        ready = {}
        for kind, (_, out, _) in servers.items():
            message = await asyncio.get_running_loop().run_in_executor(None, out.get)
            if message[0] != "ready":
                raise RuntimeError(f"the {kind} server failed: {message[1]}")
            ready[kind] = (message[1], message[2])
        bare_port, _ = ready["bare"]
        bare = await load("bare", bare_port, [click_body("0" * 32)] * clicks, concurrency)
        bot_port, pause_ids = ready["bot"]
        if home:
            await _open_home(bot_port, stub)
        updates_before = len(stub.of("chat.update"))
        first_click = time.perf_counter()
        sent: dict[str, float] = {}
        bot = await load("bot", bot_port, [click_body(p) for p in pause_ids], concurrency, sent)
        # every timed click answers its pause: each ends with a chat.update
        with contextlib.suppress(TimeoutError):
            await stub.wait_for("chat.update", updates_before + len(pause_ids), timeout=300)
        for _, _, stop in servers.values():
            stop.set()
        _, bot_out, _ = servers["bot"]
        message = await asyncio.get_running_loop().run_in_executor(None, bot_out.get)
        if message[0] != "times":
            raise RuntimeError(f"the bot server failed: {message[1]}")
        times: dict[str, dict[str, float]] = message[1]
        for process, _, _ in servers.values():
            await asyncio.get_running_loop().run_in_executor(None, process.join, 60)

        def since_sent(at: dict[str, float]) -> list[float]:
            return [(at[p] - sent[click_body(p)]) * 1000 for p in pause_ids if p in at]

        told = [times["told"][p] for p in pause_ids if p in times["told"]]
        return Report(
            bare=bare,
            bot=bot,
            resumes_done_seconds=(max(told) - first_click) if told else float("nan"),
            resumes_done=len(told),
            continued_ms=since_sent(times["continued"]),
            told_ms=since_sent(times["told"]),
        )
    finally:
        await stub.close()


async def _open_home(port: int, stub: Any) -> None:
    """The approver opens their App Home: the bot publishes it, and republishes it later."""
    published = len(stub.of("views.publish"))
    body = home_opened()
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"http://127.0.0.1:{port}/slack/events",
            data=body,
            headers=signed(body, "application/json"),
        ) as response,
    ):
        assert response.status == 200, response.status
    await stub.wait_for("views.publish", published + 1, timeout=60)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.slack_ack")
    parser.add_argument("--clicks", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--home", action="store_true", help="the approver opened their Home")
    args = parser.parse_args(argv)
    print(f"{args.clicks} signed clicks, {args.concurrency} at a time, loopback HTTP")
    report = asyncio.run(run(clicks=args.clicks, concurrency=args.concurrency, home=args.home))
    for line in report.lines():
        print(line)
    return 0 if report.met else 1


if __name__ == "__main__":
    raise SystemExit(main())
