"""Two ``python -m bot serve`` instances on a PostgreSQL cluster of the test's own, under a
burst of answers (20 at a time over both), while the cluster is restarted (a fast stop and a
start) and then frozen (SIGSTOP of the postmaster and its backends) and thawed. No answer Slack
saw acknowledged is lost, every approved execution completes, no tool runs twice, Slack never
sees a 500, and both instances recover without a restart (issue 24, findings 7 and 8). An
answer the database refused at once is told to try again, and is answered again
(``tests.slack.database_outages``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import ExecutionStatus
from bot.desk.office import REFUND_TOOL
from tests.own_postgres import own_postgres
from tests.slack.burst import INTERRUPTED
from tests.slack.database_outages import restart_and_freeze
from tests.slack.stub import SlackStub

REQUESTS = 8
CONCURRENCY = 20
FROZEN_SECONDS = 3.0  # past a click's 2.2 s budget: answers are recorded late


@pytest.mark.timeout(600)  # a minute of it waits out an event claim, as Slack does
async def test_postgres_restarted_and_frozen_under_load_loses_nothing(
    stub: SlackStub, tmp_path: Path
) -> None:
    async with own_postgres() as cluster:
        report = await restart_and_freeze(
            stub,
            cluster,
            tmp_path,
            requests=REQUESTS,
            concurrency=CONCURRENCY,
            frozen_seconds=FROZEN_SECONDS,
        )
    figures = (dict(report.statuses), report.told_to_retry, report.answered_again)
    assert report.executions == {ExecutionStatus.COMPLETED: REQUESTS}, (figures, report.pauses)
    assert 500 not in report.statuses, figures  # refused: told "try again", never a 500
    assert report.told_unmatched == 0  # every "try again" was said to an answer of the run
    assert set(report.finals.values()) == {1}, report.finals  # each end said once
    assert len(report.finals) == REQUESTS
    assert report.updated == 2 * REQUESTS  # every question's message lost its buttons
    assert set(report.asked.values()) == {1}  # each question asked once
    assert report.ready_after == [200, 200]  # both instances recovered without a restart
    # an approved refund whose pass lost the database between its take and its result is
    # never run again: the model reads that it may or may not have run (at most once)
    # (either tool's pass may meet the outage: count the refund's own "may or may not")
    interrupted = sum(f"{REFUND_TOOL} {INTERRUPTED}" in t for t in report.texts)
    assert report.refunds_run + interrupted == REQUESTS - REQUESTS // 2, report.texts
    assert report.run_twice == 0, report.texts
    assert "step.failed" not in report.log
