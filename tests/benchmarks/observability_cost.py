"""What metrics and spans cost a pause cycle when nobody scrapes or traces.

    python -m tests.benchmarks.observability_cost [--cycles 300] [--rounds 5] [--level 1]

The pause cycle of ``tests.benchmarks.cycle_cost`` (execute to the pause, answer, continue to
the end) on a SQLite file, in rounds of ``--cycles`` interleaved between three modes on the same
App: ``shipped`` (as it runs: every metric counted, OpenTelemetry installed with no tracer
provider, so each span is one check), ``off`` (every counting method of ``Metrics`` a no-op and
OpenTelemetry taken as not installed: the floor), and ``traced`` (the OpenTelemetry SDK's tracer
provider, spans recorded and dropped: what tracing costs once someone traces). It prints CPU ms
per cycle and cycles/s for each mode, the median over rounds, and shipped minus off.

Timed rounds on a shared machine vary by more than the difference sought, so it first counts
what a cycle calls (each counting method of ``Metrics``, each ``span``, ``carrier`` and
``link_to``) and times each such call alone (``timeit``, as shipped): calls per cycle times
their cost is the overhead, free of the rounds' noise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import statistics
import tempfile
import timeit
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Final
from unittest import mock

from bot import WorkflowStartText
from bot import app as app_module
from bot.core import metrics, tracing
from bot.runtime import answers, engine, interpreting, seam, tool_calls, withdrawals
from bot.testing import FakeClock
from channels.slack import observing, webapi
from tests.benchmarks.cycle_cost import Round, bench_app, pay_cycle, timed
from tests.benchmarks.resume_throughput import Inbox, PayWorkflow

COUNTING: Final = (
    "answered",
    "policy_decided",
    "grant_decided",
    "answer_time",
    "withdrawn",
    "nudged",
    "pass_ran",
    "sweep_ran",
    "slack_call",
    "slack_request",
    "lease_taken_over",
    "slack_retry",
    "model_call",
)
"""Every method through which the runtime counts (``bot.core.metrics.Metrics``)."""
MODES: Final = ("shipped", "off", "traced")
TRACING_NAMES: Final = ("span", "carrier", "link_to")
TRACING_USERS: Final = (
    app_module,
    answers,
    engine,
    interpreting,
    seam,
    tool_calls,
    withdrawals,
    observing,
    webapi,
)
"""Every module that imports ``span``, ``carrier`` or ``link_to`` (by name)."""


def _nothing(*_: object, **__: object) -> None:
    return None


@contextlib.contextmanager
def mode(name: str) -> Iterator[None]:
    """Metrics and spans as ``name`` says, for the block."""
    with contextlib.ExitStack() as stack:
        if name == "off":
            for method in COUNTING:
                stack.enter_context(mock.patch.object(metrics.Metrics, method, _nothing))
            stack.enter_context(mock.patch.object(tracing, "INSTALLED", False))
        elif name == "traced":
            from opentelemetry import trace
            from opentelemetry.sdk.trace import TracerProvider

            provider = TracerProvider()  # no span processor: recorded, then dropped
            provided = mock.patch.object(trace, "get_tracer_provider", return_value=provider)
            stack.enter_context(provided)
            stack.enter_context(mock.patch.object(trace, "get_tracer", provider.get_tracer))
        yield


@contextlib.contextmanager
def counting(calls: Counter[str]) -> Iterator[None]:
    """Count each metrics and tracing call made in the block, by name."""

    def counted(name: str, original: Callable[..., object]) -> Callable[..., object]:
        def call(*args: object, **kwargs: object) -> object:
            calls[name] += 1
            return original(*args, **kwargs)

        return call

    with contextlib.ExitStack() as stack:
        for method in COUNTING:
            original = getattr(metrics.Metrics, method)
            stack.enter_context(
                mock.patch.object(metrics.Metrics, method, counted(f"metrics.{method}", original))
            )
        for module in TRACING_USERS:
            for name in TRACING_NAMES:
                if hasattr(module, name):
                    original = getattr(module, name)
                    patched = counted(f"tracing.{name}", original)
                    stack.enter_context(mock.patch.object(module, name, patched))
        yield


def cost_per_call_us() -> dict[str, float]:
    """Each call's time alone (µs), as shipped: the best of five timeit runs."""
    counts = metrics.Metrics(FakeClock())
    took = timedelta(milliseconds=12)
    calls: dict[str, Callable[[], object]] = {
        "metrics.answered": lambda: counts.answered("answered"),
        "metrics.pass_ran": lambda: counts.pass_ran("rested", took),
        "metrics.answer_time": lambda: counts.answer_time("role", "approved", took),
        "metrics.model_call": lambda: counts.model_call("agent", "ok"),
        "metrics.withdrawn": lambda: counts.withdrawn("answered"),
        "tracing.span": lambda: _one_span(),
        "tracing.carrier": tracing.carrier,
        "tracing.link_to": lambda: tracing.link_to({"traceparent": "00-" + "1" * 32}, why="x"),
    }
    return {
        name: min(timeit.repeat(call, number=20_000, repeat=5)) / 20_000 * 1e6
        for name, call in calls.items()
    }


def _one_span() -> None:
    with tracing.span("pass", workflow="w", execution_id="e"):
        pass


async def counted_calls(cycles: int) -> Counter[str]:
    """The metrics and tracing calls of ``cycles`` cycles."""
    inbox = Inbox()
    calls: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'counted.db'}"
        async with bench_app(url, inbox) as app:
            for i in range(-5, cycles):
                with counting(calls) if i >= 0 else contextlib.nullcontext():
                    await app.execute(
                        PayWorkflow, WorkflowStartText(text=f"c{i}"), tenant_id="t", owner_id="o"
                    )
                    await app.resume(
                        inbox.pending.pop(f"c{i}"),
                        decision={"approved": True},
                        tenant_id="t",
                        answered_by="m",
                    )
    return calls


def overhead_lines(calls: Counter[str], cycles: int, cost: dict[str, float]) -> list[str]:
    lines = [f"per cycle, as shipped (counted over {cycles} cycles; each call timed alone):"]
    total = 0.0
    for name, n in sorted(calls.items()):
        each = cost.get(name, max(v for k, v in cost.items() if k.startswith(name[:7])))
        spent = n / cycles * each
        total += spent
        lines.append(f"  {name:<24} {n / cycles:5.1f} calls x {each:5.2f} µs = {spent:6.1f} µs")
    lines.append(f"  total {total:.0f} µs per cycle")
    return lines


async def measure(cycles: int, rounds: int, level: int) -> dict[str, list[Round]]:
    inbox = Inbox()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'observability.db'}"
        async with bench_app(url, inbox) as app:
            run_id = uuid.uuid4().hex[:6]
            numbers = itertools.count()

            async def cycle(_: int) -> None:
                invoice = f"{run_id}-{next(numbers)}"
                await pay_cycle(app, inbox, invoice)

            for name in MODES:  # warm up each
                with mode(name):
                    await timed(cycle, 20, level)
            results: dict[str, list[Round]] = {name: [] for name in MODES}
            for turn in range(rounds):
                order = MODES[turn % len(MODES) :] + MODES[: turn % len(MODES)]
                for name in order:  # interleaved, each mode first in turn
                    with mode(name):
                        results[name].append(await timed(cycle, cycles, level))
            return results


def report(results: dict[str, list[Round]], level: int) -> list[str]:
    lines = [f"{'mode':<8} {'CPU ms/cycle (median, each round)':<52} cycles/s (median)"]
    cpu = {name: statistics.median(r.cpu_ms for r in rounds) for name, rounds in results.items()}
    for name, rounds in results.items():
        each = " ".join(f"{r.cpu_ms:.2f}" for r in rounds)
        speed = statistics.median(r.per_second for r in rounds)
        lines.append(f"{name:<8} {cpu[name]:6.2f}  ({each:<42}) {speed:.1f}")
    shipped, off, traced = cpu["shipped"], cpu["off"], cpu["traced"]
    lines.append(
        f"at {level} at a time: shipped - off = {shipped - off:+.2f} ms per cycle "
        f"({(shipped - off) / off * 100:+.1f}%); traced - off = {traced - off:+.2f} ms "
        f"({(traced - off) / off * 100:+.1f}%); load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.observability_cost")
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--level", type=int, default=1, help="cycles at a time")
    parser.add_argument("--counted", type=int, default=50, help="cycles counted")
    args = parser.parse_args(argv)
    calls = asyncio.run(counted_calls(args.counted))
    for line in overhead_lines(calls, args.counted, cost_per_call_us()):
        print(line, flush=True)
    if args.rounds:
        results = asyncio.run(measure(args.cycles, args.rounds, args.level))
        for line in report(results, args.level):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
