"""``python -m bot serve`` through a Slack outage of every kind, and what it owed afterwards.

    python -m tests.benchmarks.outages [--requests 40] [--window 10] [--postgres]

Half the requests are asked before the outage; then Slack's Web API fails for ``--window``
seconds of each kind in turn (500s, 429s with Retry-After, refused connections, calls that
hang) while the other half is asked and the first half answered; then Slack is back and the
rest is answered. Prints how many questions were asked (and how often each), how many tools
ran, how many messages were updated, how many requests had their end said, and the time from
Slack's return until everything owed was delivered.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from tests.databases import postgres_database
from tests.slack.outages import serve_through_outage
from tests.slack.stub import SlackStub


@contextlib.asynccontextmanager
async def _database(folder: Path, postgres: bool) -> AsyncIterator[str]:
    if postgres:
        async with postgres_database() as url:
            yield url
    else:
        yield f"sqlite+aiosqlite:///{folder / 'countersign.db'}"


async def main(requests: int, window: float, postgres: bool) -> None:
    stub = SlackStub()
    await stub.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            async with _database(Path(folder), postgres) as url:
                report = await serve_through_outage(
                    stub, url, Path(folder), requests=requests, window=window
                )
    finally:
        await stub.close()
    asked_twice = sum(1 for n in report.asked.values() if n > 1)
    print(
        f"{requests} requests, Slack failing {window:.0f} s each of 500/429/refused/hang "
        f"({report.failed_calls} Web API calls failed): {report.questions} of {2 * requests} "
        f"questions asked ({asked_twice} more than once); {report.acknowledged} answers "
        f"acknowledged (statuses {dict(report.statuses)}); tools run {dict(report.ran)}; "
        f"{report.updated} messages updated; {len(report.notes)} of {requests} requesters' "
        f"notes said ({sum(1 for n in report.notes.values() if n > 1)} more than once); "
        f"{len(report.finals)} of {requests} ends said "
        f"({sum(1 for n in report.finals.values() if n > 1)} more than once); everything owed "
        f"delivered {report.seconds_to_catch_up:.1f} s after Slack came back",
        flush=True,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--postgres", action="store_true")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.requests, arguments.window, arguments.postgres))
