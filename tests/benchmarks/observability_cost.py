"""What metrics and spans cost a pause cycle when nobody scrapes or traces.

    python -m tests.benchmarks.observability_cost [--cycles 300] [--rounds 5] [--level 1]

The pause cycle of ``tests.benchmarks.cycle_cost`` (execute to the pause, answer, continue to
the end) on a SQLite file, in rounds of ``--cycles`` interleaved between three modes on the same
App: ``shipped`` (as it runs: every metric counted, OpenTelemetry installed with no tracer
provider, so each span is one check), ``off`` (every counting method of ``Metrics`` a no-op and
OpenTelemetry taken as not installed: the floor), and ``traced`` (the OpenTelemetry SDK's tracer
provider, spans recorded and dropped: what tracing costs once someone traces). It prints CPU ms
per cycle and cycles/s for each mode, the median over rounds, and shipped minus off.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import statistics
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Final
from unittest import mock

from bot import WorkflowStartText
from bot.core import metrics, tracing
from tests.benchmarks.cycle_cost import Round, bench_app, timed
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


async def measure(cycles: int, rounds: int, level: int) -> dict[str, list[Round]]:
    inbox = Inbox()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'observability.db'}"
        async with bench_app(url, inbox) as app:
            run_id = uuid.uuid4().hex[:6]
            numbers = itertools.count()

            async def cycle(_: int) -> None:
                invoice = f"{run_id}-{next(numbers)}"
                await app.execute(
                    PayWorkflow, WorkflowStartText(text=invoice), tenant_id="t", owner_id="o"
                )
                done = await app.resume(
                    inbox.pending.pop(invoice),
                    decision={"approved": True},
                    tenant_id="t",
                    answered_by="m",
                )
                assert done.output == {"text": "paid"}, done

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
    args = parser.parse_args(argv)
    results = asyncio.run(measure(args.cycles, args.rounds, args.level))
    for line in report(results, args.level):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
