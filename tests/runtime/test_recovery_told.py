"""Each tree the recovery sweep continues is told (its resume event, which channels bring their
messages up to date from) as soon as its own pass ends, not once the whole batch is continued:
after an outage a batch holds every tree answered during it, and the first would wait for all
the others (issue 24: what is owed is delivered within 30 s of the database's return)."""

from __future__ import annotations

from pathlib import Path

from bot import App
from bot.core.results import ExecutionResumeEvent
from tests.databases import database
from tests.runtime.crash_worker import CrashApplication, run_until_killed
from tests.runtime.crash_worker import Ledger as CrashLedger
from tests.runtime.test_instances import QUIET_SWEEPS


async def test_each_recovered_tree_is_told_before_the_next_is_continued(tmp_path: Path) -> None:
    async with database("sqlite", tmp_path) as url:
        assert "recorded 3" in run_until_killed(url, 3)
        ledger = CrashLedger()
        async with await App.create(
            CrashApplication,
            database_url=url,
            settings=QUIET_SWEEPS,
            services={CrashLedger: ledger},
        ) as survivor:
            ran_when_told: list[int] = []

            @survivor.on_execution_resume
            def told(event: ExecutionResumeEvent) -> None:
                if event.by_sweep:
                    ran_when_told.append(len(ledger.done))

            assert await survivor.recover() == 3

    assert ran_when_told == [1, 2, 3]  # each told once its own tool ran, before the next's
