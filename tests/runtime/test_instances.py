"""Several instances on one database: two-phase resume under a lease, recovery after a crash."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import pytest

from bot import App, ExecutionStatus, NotPausedError, PauseStatus, WorkflowStartText
from bot.testing import FakeClock, inspect_app, test_with
from tests.conftest import NO_SETTINGS
from tests.databases import BACKENDS, database
from tests.office import Inbox, Ledger, OfficeApplication, OfficeWorkflow
from tests.runtime.crash_worker import SEEN, CrashApplication, run_until_killed
from tests.runtime.crash_worker import Ledger as CrashLedger
from tests.runtime.crash_worker import survivor as crash_survivor
from tests.runtime.helpers import script_refund, script_refund_and_expense

QUIET_SWEEPS = NO_SETTINGS.model_copy(update={"countersign_sweep_interval_seconds": 60.0})
"""The survivor's own sweep on the system clock would recover some trees behind the explicit
``recover()`` under load (seen: 12 of 20 counted); a minute keeps the count the test's."""

T = TypeVar("T")


def _watch_passes(apps: list[App]) -> dict[str, int]:
    """Record the most passes that ever ran at once on one tree, across the instances."""
    running: Counter[str] = Counter()
    most: dict[str, int] = {}

    async def watched(root: str, run: Callable[[], Awaitable[T]]) -> T:
        running[root] += 1
        most[root] = max(most.get(root, 0), running[root])
        try:
            await asyncio.sleep(0.01)  # widen the window a second pass would need
            return await run()
        finally:
            running[root] -= 1

    for app in apps:
        inspect_app(app).around_each_pass(watched)
    return most


@pytest.mark.parametrize("backend", BACKENDS)
async def test_two_instances_answer_two_pauses_of_one_tree_at_once(
    backend: str, tmp_path: Path
) -> None:
    script_refund_and_expense("finished")
    inbox, ledger = Inbox(), Ledger()
    async with (
        database(backend, tmp_path) as url,
        test_with(
            OfficeApplication,
            instances=2,
            database_url=url,
            clock=FakeClock(),
            settings=NO_SETTINGS,
            services={Inbox: inbox, Ledger: ledger},
        ) as (one, two),
    ):
        paused = await one.execute(
            OfficeWorkflow, WorkflowStartText(text="go"), tenant_id="acme", owner_id="U1"
        )
        most = _watch_passes([one, two])
        expense_id = next(p.pause_id for p in paused.pending if p.pause_id)
        refund_id = inbox.last("refund-card-tool").pause_id
        results = await asyncio.gather(
            one.resume(refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"),
            two.resume(
                expense_id or "", decision={"approved": True}, tenant_id="acme", owner_id="U1"
            ),
        )
        assert most[paused.execution_id] == 1  # never two passes at once
        assert ExecutionStatus.COMPLETED in {r.status for r in results}
        final = await two.get_result(paused.execution_id, tenant_id="acme")
        assert final.status is ExecutionStatus.COMPLETED
        assert final.output == {"text": "finished"}
    assert sorted(r[0] for r in ledger.runs) == ["expense", "refund"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_hundred_concurrent_resumes_of_one_pause(backend: str, tmp_path: Path) -> None:
    script_refund()
    inbox, ledger = Inbox(), Ledger()
    async with (
        database(backend, tmp_path) as url,
        test_with(
            OfficeApplication,
            instances=2,
            database_url=url,
            settings=NO_SETTINGS,
            services={Inbox: inbox, Ledger: ledger},
        ) as apps,
    ):
        await apps[0].execute(
            OfficeWorkflow, WorkflowStartText(text="go"), tenant_id="acme", owner_id="U1"
        )
        pause_id = inbox.last("refund-card-tool").pause_id
        outcomes = await asyncio.gather(
            *(
                apps[i % 2].resume(
                    pause_id, decision={"approved": True}, tenant_id="acme", answered_by=f"m{i}"
                )
                for i in range(100)
            ),
            return_exceptions=True,
        )
    taken = [o for o in outcomes if not isinstance(o, BaseException)]
    refused = [o for o in outcomes if isinstance(o, NotPausedError)]
    assert len(taken) == 1, [
        o for o in outcomes if isinstance(o, BaseException) and not isinstance(o, NotPausedError)
    ]
    assert len(refused) == 99
    assert ledger.runs == [
        ("refund", {"order_id": "7", "amount": 30.0, "email": "jane@example.com"})
    ]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_recovery_continues_what_a_killed_instance_recorded(
    backend: str, tmp_path: Path
) -> None:
    async with database(backend, tmp_path) as url:
        out = run_until_killed(url, 20)
        assert "recorded 20" in out
        ledger = CrashLedger()
        async with await App.create(
            CrashApplication,
            database_url=url,
            settings=QUIET_SWEEPS,
            services={CrashLedger: ledger},
        ) as survivor:
            assert await survivor.recover() == 20
            assert await survivor.recover() == 0
            pending = await survivor.list_pending(tenant_id="acme")
            assert pending == []
        assert sorted(ledger.done) == sorted(f"order-{i}" for i in range(20))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_recovery_continues_a_pass_killed_inside_an_approved_tool(
    backend: str, tmp_path: Path
) -> None:
    async with database(backend, tmp_path) as url:
        out = run_until_killed(url, 1, "tool")
        assert "in the tool" in out
        [execution_id] = re.findall(r"execution (\w+)", out)
        ledger, clock = CrashLedger(), FakeClock()
        async with await crash_survivor(url, ledger, clock) as survivor:
            assert await survivor.recover() == 0  # the dead instance's lease is still live
            await clock.advance(timedelta(seconds=61))  # the sweep recovers it on the clock
            assert await survivor.recover() == 0  # once
            done = await survivor.get_result(execution_id, tenant_id="acme", record=True)
            assert done.status is ExecutionStatus.COMPLETED
            assert done.record is not None and len(done.record.pauses) == 1
        assert ledger.done == []  # the tool that may have run is never run again


@pytest.mark.parametrize("backend", BACKENDS)
async def test_recovery_continues_a_pass_killed_after_its_tool_returned(
    backend: str, tmp_path: Path
) -> None:
    """The tool's result rides on the pass's last write; killed before it, in the model's next
    turn, the pass leaves the result in LangGraph's write of the tool's task: recovery never
    runs the tool again, the model reads what it returned, not that it "may have run", and the
    question shows it (recovery's last write carries it)."""
    async with database(backend, tmp_path) as url:
        out = run_until_killed(url, 1, "after-tool")
        assert "after the tool" in out
        [execution_id] = re.findall(r"execution (\w+)", out)
        ledger, clock = CrashLedger(), FakeClock()
        SEEN.clear()
        async with await crash_survivor(url, ledger, clock) as survivor:
            assert await survivor.recover() == 0  # the dead instance's lease is still live
            await clock.advance(timedelta(seconds=61))  # the sweep recovers it on the clock
            done = await survivor.get_result(execution_id, tenant_id="acme", record=True)
            assert done.status is ExecutionStatus.COMPLETED
            store = inspect_app(survivor).store
            [taken] = await store.list_by_root(execution_id, [PauseStatus.TAKEN])
            assert taken.tool_result == "shipped order-0"
        assert ledger.done == []  # run once, by the instance that died
        assert SEEN == ["shipped order-0"]
