"""Two instances on one PostgreSQL database, a burst of Slack answers, one SIGKILLed midway.

    python -m tests.benchmarks.chaos [--requests 300]

Each request asks two questions, so 300 requests are 600 answers (Approve clicks, reject modal
submissions, thread replies), 50 at a time, spread over both instances; the answers the dead
instance never acknowledged are sent to the live one (as Slack retries them). Prints how many
each instance acknowledged, the live one's statuses, how many trees its recovery continued, and
the time until every request had finished once.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from tests.databases import postgres_database
from tests.slack.chaos import two_instances_one_killed
from tests.slack.stub import SlackStub


async def main(requests: int) -> None:
    stub = SlackStub()
    await stub.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            async with postgres_database() as url:
                report = await two_instances_one_killed(stub, url, Path(folder), requests=requests)
    finally:
        await stub.close()
    print(
        f"{2 * requests} answers to {requests} requests: {report.acked_by_the_dead} acknowledged "
        f"by the instance killed midway, {report.live_answers} by the live one "
        f"({report.retried_on_the_live} of them retried after the kill), live statuses "
        f"{dict(report.live_statuses)}; {report.recovered} trees continued by the live "
        f"instance's recovery; every run ended "
        f"{report.seconds_to_finish:.1f} s after the first answer",
        flush=True,
    )
    print(
        f"pauses {dict(report.pauses)}, executions {dict(report.executions)}, audit entries "
        f"{dict(report.audit_entries)}, approved tools run {report.ran}; Slack told "
        f"{len(report.finals)} of {requests} requesters how their request ended",
        flush=True,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    asyncio.run(main(parser.parse_args().requests))
