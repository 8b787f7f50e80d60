"""The RSS of ``python -m bot serve`` on SQLite while signed Slack traffic drives executions.

    python -m tests.benchmarks.server_soak [--minutes 10] [--concurrency 10] [--warm-up 2]
        [--diagnose]

The server is the built-in Slack desk on its offline model, in its own process, on a SQLite
file, with the Slack Web API faked on loopback in this process. For ``--minutes`` this process
keeps ``--concurrency`` requests going: a mention starts an execution that asks two questions
(a refund in the desk channel, an expense in the requester's thread); the refund is approved by
a signed Approve click, the expense by the owner's click or a reply in the thread (in turn);
the execution ends when its summary is said in the thread. Every ``--sample`` seconds it reads
the server's ``VmRSS`` from ``/proc/<pid>/status``.

It prints the executions finished, the RSS at the end of the warm-up and at the end, and the
growth per 1,000 executions after the warm-up: end minus warm-up, and the slope of a
least-squares line through every sample after it (less sensitive to where one sample fell).
Target: at most 0.5 MiB per 1,000 executions. Traffic goes to loopback only, and stops by
itself after ``--minutes``.

``--diagnose``: the server runs with tracemalloc (``tests.benchmarks.soak_probe``: slower, so
its RSS is not the figure); at the end of the warm-up and at the end it dumps what it holds, and
this prints what grew in between: the allocation sites by size, and the live objects by type.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import signal
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import aiohttp

from tests.ports import free_port
from tests.slack.burst import DESK, FINAL, FORM, JSON, OWNER, click, env, post
from tests.slack.checks import buttons
from tests.slack.conftest import interactive_body
from tests.slack.stub import BOT_USER, TEAM, SlackStub

TARGET_MIB_PER_1000: Final = 0.5
REQUESTER_CHANNEL: Final = "C0GENERAL"
KEPT_POSTS: Final = 2_000
"""Messages the stub keeps for ``conversations.*`` (it scans them on each such call)."""
REQUEST_TIMEOUT: Final = 120.0
REPLY_AFTER: Final = 1.0
ROOT: Final = Path(__file__).resolve().parents[2]
SHOWN: Final = 25


@dataclass(frozen=True, slots=True)
class Sample:
    seconds: float
    executions: int
    rss_mib: float


@dataclass
class SoakReport:
    minutes: float
    concurrency: int
    warm_up_minutes: float
    samples: list[Sample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    grown: list[str] = field(default_factory=list)
    """With ``--diagnose``: what the server held more at the end than after the warm-up."""

    @property
    def executions(self) -> int:
        return self.samples[-1].executions if self.samples else 0

    @property
    def warm(self) -> Sample:
        """The first sample at or after the warm-up."""
        limit = self.warm_up_minutes * 60
        return next((s for s in self.samples if s.seconds >= limit), self.samples[-1])

    @property
    def after_warm_up(self) -> list[Sample]:
        return [s for s in self.samples if s.seconds >= self.warm.seconds]

    @property
    def per_1000(self) -> float:
        """End minus warm-up RSS, per 1,000 executions run in between."""
        end, warm = self.samples[-1], self.warm
        ran = end.executions - warm.executions
        return (end.rss_mib - warm.rss_mib) / ran * 1000 if ran else float("nan")

    @property
    def slope_per_1000(self) -> float:
        """The least-squares slope of RSS over executions after the warm-up, per 1,000."""
        points = [(s.executions, s.rss_mib) for s in self.after_warm_up]
        if len(points) < 2:
            return float("nan")
        mean_x = sum(x for x, _ in points) / len(points)
        mean_y = sum(y for _, y in points) / len(points)
        spread = sum((x - mean_x) ** 2 for x, _ in points)
        if not spread:
            return float("nan")
        return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread * 1000

    def lines(self) -> list[str]:
        first, warm, end = self.samples[0], self.warm, self.samples[-1]
        worst = max(self.per_1000, self.slope_per_1000)
        return [
            f"{self.executions} executions in {end.seconds / 60:.1f} min "
            f"({self.executions / end.seconds:.1f}/s, {self.concurrency} requests at a time), "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
            f"RSS: start {first.rss_mib:.1f} MiB, after the warm-up ({warm.seconds / 60:.1f} "
            f"min, {warm.executions} executions) {warm.rss_mib:.1f} MiB, end {end.rss_mib:.1f} "
            f"MiB, peak {max(s.rss_mib for s in self.samples):.1f} MiB",
            f"after the warm-up: {self.per_1000:+.2f} MiB per 1,000 executions (end - warm-up), "
            f"{self.slope_per_1000:+.2f} (least-squares slope); target <= "
            f"{TARGET_MIB_PER_1000} MiB: {'met' if worst <= TARGET_MIB_PER_1000 else 'NOT met'}",
            f"failures: {len(self.failures)}",
            *(f"  {failure}" for failure in self.failures[:10]),
            *self.grown,
        ]


class SoakStub(SlackStub):
    """The Web API stub, told of each call as it comes and keeping none (a soak makes many)."""

    def __init__(self) -> None:
        super().__init__()
        self.on_call: Any = None

    async def _record(self, method: str, request: Any) -> dict[str, Any]:
        payload = await super()._record(method, request)
        self.calls.clear()
        del self.posted[:-KEPT_POSTS]
        if self.on_call is not None:
            self.on_call(method, payload)
        return payload


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def thread_of(i: int) -> str:
    return f"1700001000.{i:06d}"


def mention(i: int) -> str:
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": TEAM,
            "event_id": f"Ev0SOAKMENTION{i:07d}",
            "event": {
                "type": "app_mention",
                "user": OWNER,
                "text": f"<@{BOT_USER}> please handle request {i}",
                "channel": REQUESTER_CHANNEL,
                "ts": thread_of(i),
            },
        }
    )


def reply(thread: str, n: int) -> str:
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": TEAM,
            "event_id": f"Ev0SOAKREPLY{n:07d}",
            "event": {
                "type": "message",
                "user": OWNER,
                "text": "approve",
                "channel": REQUESTER_CHANNEL,
                "channel_type": "channel",
                "ts": f"1700002000.{n:06d}",
                "thread_ts": thread,
            },
        }
    )


def owner_click(pause_id: str) -> str:
    return interactive_body(
        {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": OWNER, "team_id": TEAM},
            "container": {
                "type": "message",
                "channel_id": REQUESTER_CHANNEL,
                "is_ephemeral": False,
            },
            "channel": {"id": REQUESTER_CHANNEL},
            "trigger_id": "t",
            "actions": [{"type": "button", "action_id": "countersign_approve", "value": pause_id}],
        }
    )


class Driver:
    """Answers each question as Slack would carry a person's answer, and counts the ends."""

    def __init__(self, session: aiohttp.ClientSession, events: str, report: SoakReport) -> None:
        self._session = session
        self._events = events
        self._report = report
        self._ends: dict[str, asyncio.Future[None]] = {}
        self._answers: set[asyncio.Task[None]] = set()
        self._expenses = itertools.count()
        self._replies = itertools.count()
        self.finished = 0

    def on_call(self, method: str, payload: dict[str, Any]) -> None:
        if method != "chat.postMessage":
            return
        text = str(payload.get("text") or "")
        thread = str(payload.get("thread_ts") or "")
        if FINAL.match(text):
            end = self._ends.get(thread)
            if end is not None and not end.done():
                end.set_result(None)
            return
        blocks = payload.get("blocks")
        found = buttons(json.loads(blocks) if isinstance(blocks, str) else list(blocks or []))
        if not found:
            return
        pause = str(found[0]["value"])
        if payload.get("channel") == DESK:
            self._answer(click(pause), FORM)
        elif next(self._expenses) % 2:
            # a reply finds its question by the message's reference, kept once Slack answered
            # the post (this call is still being answered): the owner replies a moment later
            self._answer(reply(thread, next(self._replies)), JSON, after=REPLY_AFTER)
        else:
            self._answer(owner_click(pause), FORM)

    def _answer(self, body: str, kind: str, *, after: float = 0.0) -> None:
        task = asyncio.get_running_loop().create_task(self._post(body, kind, after))
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    async def _post(self, body: str, kind: str, after: float) -> None:
        if after:
            await asyncio.sleep(after)
        status = await post(self._session, self._events, body, kind)
        if status != 200:
            self._report.failures.append(f"answer got {status}")

    async def request(self, i: int) -> None:
        end = asyncio.get_running_loop().create_future()
        self._ends[thread_of(i)] = end
        try:
            status = await post(self._session, self._events, mention(i), JSON)
            if status != 200:
                self._report.failures.append(f"mention {i} got {status}")
                return
            await asyncio.wait_for(end, REQUEST_TIMEOUT)
            self.finished += 1
        except TimeoutError:
            self._report.failures.append(f"request {i} not finished in {REQUEST_TIMEOUT:.0f} s")
        finally:
            del self._ends[thread_of(i)]


async def soak(
    *,
    minutes: float,
    concurrency: int,
    warm_up: float,
    sample_seconds: float,
    diagnose: bool = False,
    frames: int = 3,
    server_env: dict[str, str] | None = None,
) -> SoakReport:
    report = SoakReport(minutes=minutes, concurrency=concurrency, warm_up_minutes=warm_up)
    stub = SoakStub()
    await stub.start()
    port = free_port()
    events = f"http://127.0.0.1:{port}/slack/events"
    try:
        with tempfile.TemporaryDirectory(prefix="countersign-soak-") as folder:
            url = f"sqlite+aiosqlite:///{Path(folder) / 'countersign.db'}"
            log = (Path(folder) / "serve.log").open("ab")
            environ = env(stub, port, url) | (server_env or {})
            command = ["bot", "serve"]
            if diagnose:
                command = ["tests.benchmarks.soak_probe"]
                environ |= {
                    "PYTHONPATH": str(ROOT),
                    "SOAK_PROBE_DIR": folder,
                    "SOAK_PROBE_FRAMES": str(frames),
                }
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                *command,
                cwd=folder,
                env=environ,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=log,
            )
            log.close()
            probe = Probe(process.pid, Path(folder)) if diagnose else None
            connector = aiohttp.TCPConnector(limit=concurrency * 4)
            async with aiohttp.ClientSession(connector=connector) as session:
                try:
                    await _healthy(session, f"http://127.0.0.1:{port}/healthz", process)
                    driver = Driver(session, events, report)
                    stub.on_call = driver.on_call
                    await _drive(
                        driver, process.pid, report, minutes, concurrency, sample_seconds, probe
                    )
                    if probe is not None:
                        await probe.dump()
                        report.grown = probe.grown()
                finally:
                    if process.returncode is None:
                        process.terminate()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(process.wait(), 60)
            errors = [
                line
                for line in (Path(folder) / "serve.log").read_text(errors="replace").splitlines()
                if "ERROR" in line or "Traceback" in line
            ]
            report.failures.extend(f"server log: {line}" for line in errors[:5])
    finally:
        await stub.close()
    return report


async def _healthy(
    session: aiohttp.ClientSession, url: str, process: asyncio.subprocess.Process
) -> None:
    """Once ``/healthz`` answers 200 (tracemalloc makes a start slow: up to 3 minutes)."""
    for _ in range(1800):
        if process.returncode is not None:
            raise RuntimeError(f"serve exited {process.returncode}")
        with contextlib.suppress(aiohttp.ClientError):
            async with session.get(url) as response:
                if response.status == 200:
                    return
        await asyncio.sleep(0.1)
    raise RuntimeError("serve never became healthy")


async def _drive(
    driver: Driver,
    pid: int,
    report: SoakReport,
    minutes: float,
    concurrency: int,
    sample_seconds: float,
    probe: Probe | None,
) -> None:
    started = time.monotonic()
    deadline = started + minutes * 60
    numbers = itertools.count()

    async def requester() -> None:
        while time.monotonic() < deadline:
            await driver.request(next(numbers))

    def sample() -> None:
        point = Sample(time.monotonic() - started, driver.finished, rss_mib(pid))
        report.samples.append(point)

    sample()
    requesters = [asyncio.create_task(requester()) for _ in range(concurrency)]
    printed = 0.0
    while not all(r.done() for r in requesters):
        await asyncio.wait(requesters, timeout=sample_seconds)
        sample()
        point = report.samples[-1]
        if probe is not None and not probe.dumped and point.seconds >= report.warm_up_minutes * 60:
            await probe.dump()
        if point.seconds - printed >= 60:
            printed = point.seconds
            print(
                f"  {point.seconds / 60:4.1f} min: {point.executions} executions, "
                f"RSS {point.rss_mib:.1f} MiB",
                flush=True,
            )
    for r in requesters:
        r.result()


class Probe:
    """Asks the probed server (``tests.benchmarks.soak_probe``) for what it holds, and diffs."""

    def __init__(self, pid: int, folder: Path) -> None:
        self._pid = pid
        self._folder = folder
        self.dumped = 0

    async def dump(self) -> None:
        done = self._folder / f"snap{self.dumped}.done"
        os.kill(self._pid, signal.SIGUSR1)
        while not done.exists():  # noqa: ASYNC110 - a file another process writes
            await asyncio.sleep(0.2)
        self.dumped += 1

    def grown(self) -> list[str]:
        lines = ["native, warm-up -> end (MiB; threads):"]
        native = [json.loads((self._folder / f"native{n}.json").read_text()) for n in (0, 1)]
        for key, value in native[1].items():
            was = native[0].get(key, 0)
            scale = 1 if key == "threads" else 2**20
            lines.append(f"  {key:<14} {was / scale:9.2f} -> {value / scale:9.2f}")
        if not (self._folder / "snap0.tracemalloc").exists():
            return lines + self._types()
        before = tracemalloc.Snapshot.load(str(self._folder / "snap0.tracemalloc"))
        after = tracemalloc.Snapshot.load(str(self._folder / "snap1.tracemalloc"))
        lines.append("grown, by allocation site (tracemalloc, end - warm-up):")
        for stat in after.compare_to(before, "lineno")[:SHOWN]:
            site = stat.traceback
            lines.append(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d}  {site}")
        lines.append("grown, by where it was allocated from (our innermost frames):")
        for stat in after.compare_to(before, "traceback")[:10]:
            ours = [f for f in stat.traceback if "/site-packages/" not in f.filename][-3:]
            frames = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(ours))
            lines.append(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d}  {frames}")
        return lines + self._types()

    def _types(self) -> list[str]:
        lines = []
        kinds_before = json.loads((self._folder / "types0.json").read_text())
        kinds_after = json.loads((self._folder / "types1.json").read_text())
        grown = sorted(
            ((n - kinds_before.get(kind, 0), kind) for kind, n in kinds_after.items()),
            reverse=True,
        )
        lines.append("grown, live objects by type (gc.get_objects):")
        lines.extend(f"  {n:+8d}  {kind}" for n, kind in grown[:SHOWN] if n > 0)
        return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.server_soak")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument(
        "--warm-up", type=float, default=None, help="minutes (default: 2, or a fifth of a run)"
    )
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--diagnose", action="store_true", help="tracemalloc in the server")
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting of the server's environment (e.g. MALLOC_ARENA_MAX=2)",
    )
    parser.add_argument(
        "--frames", type=int, default=3, help="tracemalloc's frames (--diagnose; 0: off)"
    )
    args = parser.parse_args(argv)
    warm_up = args.warm_up if args.warm_up is not None else min(2.0, args.minutes / 5)
    report = asyncio.run(
        soak(
            minutes=args.minutes,
            concurrency=args.concurrency,
            warm_up=warm_up,
            sample_seconds=args.sample,
            diagnose=args.diagnose,
            frames=args.frames,
            server_env=dict(pair.split("=", 1) for pair in args.server_env),
        )
    )
    print(f"python -m bot serve on SQLite, {args.minutes:g} min soak")
    for line in report.lines():
        print(line)
    return 0 if not report.failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
