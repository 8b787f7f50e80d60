"""Issue 24's two outage runs, as real processes, and the figures its "Done when" asks for.

    python -m tests.benchmarks.outage_runs slack [--requests 40] [--window 10] [--expiring 6]
    python -m tests.benchmarks.outage_runs postgres [--requests 150] [--concurrency 20]
                                                   [--frozen 10]

``slack``: ``python -m bot serve`` (SQLite) while Slack's Web API fails for ``--window`` seconds
of each kind in turn (500s, 429s with Retry-After, refused connections, calls that hang): half
the requests are asked before the outage and answered during it, the other half asked during
it and answered once Slack is back (``tests.slack.outages``); ``--expiring`` urgent requests
more are asked just before it and never answered: their refunds expire during it (the run
fails) and their expenses are withdrawn.

``postgres``: two ``serve`` instances on a PostgreSQL cluster of the run's own (another port;
the shared one is never restarted) under ``2 × --requests`` answers, ``--concurrency`` at a
time, while the cluster is restarted (fast stop, start) and frozen for ``--frozen`` seconds
(``tests.slack.database_outages``). 150 requests are the issue's 300 clicks.

Each prints: questions asked (and asked once), answers acknowledged, tools run (and run twice:
must be 0), messages updated, requesters told, the statuses Slack saw (no 500), and the time
from the outage's end until everything owed was delivered (the issue's target: ≤ 30 s).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from tests.own_postgres import own_postgres
from tests.slack.database_outages import restart_and_freeze
from tests.slack.outages import questions_closed, serve_through_outage
from tests.slack.stub import SlackStub


async def slack_run(requests: int, window: float, expiring: int) -> None:
    stub = SlackStub()
    await stub.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite+aiosqlite:///{Path(folder) / 'countersign.db'}"
            report = await serve_through_outage(
                stub, url, Path(folder), requests=requests, window=window, expiring=expiring
            )
    finally:
        await stub.close()
    once = sum(1 for n in report.asked.values() if n == 1)
    twice = sum(1 for t in report.finals.values() if t > 1)
    print(f"slack outage: {requests} requests, {window:.0f} s each of 500 / 429 / refused / hang")
    print(f"  Web API calls the outage failed: {report.failed_calls}")
    asked = 2 * (requests + expiring)
    print(f"  questions asked: {report.questions} of {asked} ({once} asked once)")
    print(f"  answers acknowledged: {report.acknowledged}")
    print(
        f"  tools run: {report.ran['refund']} refunds (of {requests - requests // 2} approved), "
        f"{report.ran['expense']} expenses (of {requests}); run twice: "
        f"{report.run_twice}"
    )
    print(
        f"  questions' messages updated (buttons gone): {questions_closed(stub)} of "
        f"{asked}; messages updated in all: {report.updated}"
    )
    print(
        f"  requesters told: {len(report.notes)} of {requests + expiring} waiting notes, "
        f"{len(report.finals)} of {requests} ends ({twice} said more than once)"
    )
    print(
        f"  {expiring} urgent requests, never answered: {report.expired_closed} of {expiring} "
        f"expired questions and {report.withdrawn_closed} of {expiring} withdrawn ones updated "
        f"(buttons gone), {report.failures_told} of {expiring} requesters told the run failed"
    )
    print(f"  statuses Slack saw: {dict(report.statuses)}")
    print(f"  caught up {report.seconds_to_catch_up:.1f} s after Slack came back")
    print(f"  tracebacks in the log: {report.log.count('Traceback')}", flush=True)


async def postgres_run(
    requests: int, concurrency: int, frozen: float, log: Path | None = None
) -> None:
    stub = SlackStub()
    await stub.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            async with own_postgres() as cluster:
                report = await restart_and_freeze(
                    stub,
                    cluster,
                    Path(folder),
                    requests=requests,
                    concurrency=concurrency,
                    frozen_seconds=frozen,
                )
    finally:
        await stub.close()
    if log is not None:
        await asyncio.to_thread(log.write_text, report.log)
    answers = 2 * requests
    once = sum(1 for n in report.asked.values() if n == 1)
    print(
        f"postgres outage: {answers} answers to {requests} requests, {concurrency} at a time on "
        f"two instances; the cluster restarted, then frozen {frozen:.0f} s"
    )
    print(f"  questions asked: {len(report.asked)} of {answers} ({once} asked once)")
    print(
        f"  answers sent: {sum(report.statuses.values())} ({report.acknowledged} acknowledged, "
        f"{report.told_to_retry} of them told to try again, nothing recorded); "
        f"answered again: {report.answered_again}"
    )
    print(f"  statuses Slack saw: {dict(report.statuses)}")
    print(f"  executions: {dict(report.executions)}; pauses: {dict(report.pauses)}")
    print(
        f"  tools run: {report.refunds_run} refunds (of {requests - requests // 2} approved; "
        f"{report.interrupted} requests told a tool may or may not have run), "
        f"{report.expenses_run} expenses (of {requests}); run twice: {report.run_twice}"
    )
    print(f"  questions' messages updated (buttons gone): {report.updated} of {answers}")
    twice = sum(1 for n in report.finals.values() if n > 1)
    print(f"  requesters told their end: {len(report.finals)} of {requests} ({twice} twice)")
    print(f"  /readyz at the end: {report.ready_after}")
    print(
        f"  caught up {report.seconds_to_catch_up:.1f} s after the database thawed "
        f"(the last answer told to try again was sent again "
        f"{report.last_answered_again:.1f} s after it)",
        flush=True,
    )
    print(f"  not acknowledged, by kind and status: {dict(report.not_acknowledged)}")
    phases = ", ".join(f"{name} {at:.1f} s" for name, at in report.phases.items())
    print(f"  after the thaw: {phases}")
    print(f"  ends said after the thaw: {progress(report.ends_said)}", flush=True)


def progress(said: list[tuple[float, int]]) -> str:
    """How many ends were said by each whole second after the thaw."""
    by_second: dict[int, int] = {}
    for at, count in said:
        by_second[int(at) + 1] = count
    return ", ".join(f"{second} s: {count}" for second, count in sorted(by_second.items()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    runs = parser.add_subparsers(dest="run", required=True)
    slack = runs.add_parser("slack")
    slack.add_argument("--requests", type=int, default=40)
    slack.add_argument("--window", type=float, default=10.0)
    slack.add_argument(
        "--expiring", type=int, default=6, help="urgent requests whose questions expire"
    )
    postgres = runs.add_parser("postgres")
    postgres.add_argument("--requests", type=int, default=40)
    postgres.add_argument("--concurrency", type=int, default=20)
    postgres.add_argument("--frozen", type=float, default=10.0)
    postgres.add_argument("--log", type=Path, help="write both instances' logs to this file")
    arguments = parser.parse_args()
    if arguments.run == "slack":
        asyncio.run(slack_run(arguments.requests, arguments.window, arguments.expiring))
    else:
        asyncio.run(
            postgres_run(arguments.requests, arguments.concurrency, arguments.frozen, arguments.log)
        )
