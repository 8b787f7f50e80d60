"""An answer opens its tree in its own write (issue 32): the lease taken, the tree marked
RUNNING, and the continuation adopts it — or, busy here or on another instance, the answer is
recorded alone and the continuation opens the tree as before. On a SQLite file and on
PostgreSQL."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from bot import Answered, App, ExecutionStatus, WorkflowStartText
from bot.store.leases import LeaseClaim, SqlLeases
from bot.store.tables import leases
from bot.testing import FakeClock, inspect_app
from tests.conftest import NO_SETTINGS, MakeOffice
from tests.databases import BACKENDS, database
from tests.office import Inbox, Ledger, OfficeApplication, OfficeWorkflow
from tests.runtime.crash_worker import Ledger as CrashLedger
from tests.runtime.crash_worker import run_until_killed
from tests.runtime.crash_worker import survivor as crash_survivor
from tests.runtime.helpers import run, script_refund, script_refund_and_expense


async def lease_owner(app: App, root: str) -> str | None:
    statement = select(leases.c.owner).where(leases.c.root_execution_id == root)
    return await app.database.transactions.read(lambda c: c.execute(statement).scalar())


async def status_of(app: App, root: str) -> ExecutionStatus:
    return (await app.get_result(root, tenant_id="acme")).status


async def approve(app: App, pause_id: str) -> Answered:
    outcome = await app.answer(
        pause_id, tenant_id="acme", by="m", decision={"approved": True}, continue_run=False
    )
    assert isinstance(outcome, Answered), outcome
    return outcome


async def until_free_here(app: App, root: str) -> None:
    guard = inspect_app(app).guard
    while guard.is_busy_here(root):  # noqa: ASYNC110 - the give-up runs on the loop's timer
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_answer_takes_the_lease_and_marks_the_tree_running_in_its_write(
    make_office: MakeOffice, backend: str, tmp_path: Path
) -> None:
    script_refund("done")
    async with database(backend, tmp_path) as url:
        office = await make_office(database_url=url)
        paused = await run(office)
        root = paused.execution_id

        answered = await approve(office.app, office.inbox.last("refund-card-tool").pause_id)

        # before any continuation: the tree is held here, as the answer's write left it
        assert await lease_owner(office.app, root) == inspect_app(office.app).guard.owner
        assert await status_of(office.app, root) is ExecutionStatus.RUNNING
        assert inspect_app(office.app).guard.is_busy_here(root)
        result = await office.app.continue_answer(answered)
        assert result.status is ExecutionStatus.COMPLETED
        assert [r[0] for r in office.ledger.runs] == ["refund"]
        assert await lease_owner(office.app, root) is None  # given up as the tree ended
        assert not inspect_app(office.app).guard.is_busy_here(root)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_two_answers_to_sibling_pauses_at_once_one_opens_the_other_falls_back(
    make_office: MakeOffice, backend: str, tmp_path: Path
) -> None:
    script_refund_and_expense("finished")
    async with database(backend, tmp_path) as url:
        office = await make_office(database_url=url)
        paused = await run(office)
        root = paused.execution_id
        refund_id = office.inbox.last("refund-card-tool").pause_id
        expense_id = next(p.pause_id for p in paused.pending if p.pause_id)
        assert expense_id is not None

        refund, expense = await asyncio.gather(
            approve(office.app, refund_id),
            office.app.answer(
                expense_id,
                tenant_id="acme",
                by="U1",
                decision={"approved": True},
                continue_run=False,
            ),
        )
        assert isinstance(expense, Answered), expense
        # one of them opened the tree; the other was recorded alone (the lock was taken)
        assert await lease_owner(office.app, root) == inspect_app(office.app).guard.owner
        assert await status_of(office.app, root) is ExecutionStatus.RUNNING

        results = await asyncio.gather(
            office.app.continue_answer(expense), office.app.continue_answer(refund)
        )
        assert ExecutionStatus.COMPLETED in {r.status for r in results}
        assert await status_of(office.app, root) is ExecutionStatus.COMPLETED
        assert sorted(r[0] for r in office.ledger.runs) == ["expense", "refund"]  # each once
        done = await office.app.get_result(root, tenant_id="acme", record=True)
        assert done.record is not None and len(done.record.pauses) == 2
        assert await lease_owner(office.app, root) is None


async def test_an_answer_while_another_instance_holds_the_lease_is_recorded_alone(
    make_office: MakeOffice,
) -> None:
    """It neither waits nor takes the lease: the continuation waits for the holder (here,
    until its lease expires), then opens the tree itself; the next answer opens it again."""
    script_refund_and_expense("finished")
    office = await make_office()
    paused = await run(office)
    root = paused.execution_id
    holder = LeaseClaim(root, "stalled", office.clock.now(), timedelta(seconds=60))
    assert await SqlLeases(office.app.database).try_take(holder)

    refund = await approve(office.app, office.inbox.last("refund-card-tool").pause_id)

    assert await lease_owner(office.app, root) == "stalled"
    assert await status_of(office.app, root) is ExecutionStatus.PAUSED  # nothing opened
    assert not inspect_app(office.app).guard.is_busy_here(root)
    continuing = asyncio.ensure_future(office.app.continue_answer(refund))
    await office.clock.advance(timedelta(seconds=61))
    assert (await asyncio.wait_for(continuing, timeout=30)).status is ExecutionStatus.PAUSED
    assert [r[0] for r in office.ledger.runs] == ["refund"]

    expense_id = next(p.pause_id for p in paused.pending if p.pause_id)
    expense = await office.app.answer(
        expense_id or "",
        tenant_id="acme",
        by="U1",
        decision={"approved": True},
        continue_run=False,
    )
    assert isinstance(expense, Answered)
    assert await lease_owner(office.app, root) == inspect_app(office.app).guard.owner
    assert (await office.app.continue_answer(expense)).status is ExecutionStatus.COMPLETED
    assert sorted(r[0] for r in office.ledger.runs) == ["expense", "refund"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_answer_never_continued_gives_its_tree_up_to_recovery(
    backend: str, tmp_path: Path
) -> None:
    """``answer(..., continue_run=False)`` and no ``continue_answer``: the tree the answer
    opened is given up after ``adopt_within`` (lease, then lock), and the recovery sweep moves
    it on once the answer is older than a lease — the tool once, one answer in the audit."""
    script_refund("done")
    clock = FakeClock()
    inbox, ledger = Inbox(), Ledger()
    async with (
        database(backend, tmp_path) as url,
        await App.create(
            OfficeApplication,
            database_url=url,
            clock=clock,
            settings=NO_SETTINGS,
            services={Inbox: inbox, Ledger: ledger},
        ) as app,
    ):
        guard = inspect_app(app).guard
        guard.adopt_within = timedelta(milliseconds=50)
        paused = await app.execute(
            OfficeWorkflow,
            WorkflowStartText(text="go"),
            tenant_id="acme",
            owner_id="U1",
        )
        root = paused.execution_id
        await approve(app, inbox.last("refund-card-tool").pause_id)
        assert guard.is_busy_here(root)  # held for a continuation that never comes

        await until_free_here(app, root)

        assert await lease_owner(app, root) is None
        assert await status_of(app, root) is ExecutionStatus.RUNNING  # recovery's to move on
        assert ledger.runs == []
        await clock.advance(timedelta(seconds=61))  # the sweep runs on the clock
        assert await status_of(app, root) is ExecutionStatus.COMPLETED
        assert [r[0] for r in ledger.runs] == ["refund"]
        done = await app.get_result(root, tenant_id="acme", record=True)
        assert done.record is not None and len(done.record.pauses) == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_instance_killed_after_its_answer_opened_the_tree_is_taken_over(
    backend: str, tmp_path: Path
) -> None:
    """The tree is RUNNING from the answer's write, before any continuation: a process
    SIGKILLed right then leaves its lease to expire; another instance takes it over and moves
    the run on — the tool once, one answer in the audit."""
    async with database(backend, tmp_path) as url:
        out = run_until_killed(url, 1)  # answered (continue_run=False), then SIGKILLed
        assert "recorded 1" in out
        [root] = re.findall(r"execution (\w+)", out)
        ledger = CrashLedger()
        clock = FakeClock()  # the dead instance's time: its lease is live until it expires
        async with await crash_survivor(url, ledger, clock) as survivor:
            dead = await lease_owner(survivor, root)
            assert dead is not None and dead != inspect_app(survivor).guard.owner
            assert await status_of(survivor, root) is ExecutionStatus.RUNNING
            assert await survivor.recover() == 0  # the dead instance's lease is still live
            await clock.advance(timedelta(seconds=61))  # the sweep takes it over on the clock
            done = await survivor.get_result(root, tenant_id="acme", record=True)
            assert done.status is ExecutionStatus.COMPLETED
            assert done.record is not None and len(done.record.pauses) == 1
            registry = survivor.metrics.registry
            assert registry.get_sample_value("countersign_lease_takeovers_total") == 1
            assert await lease_owner(survivor, root) is None
        assert ledger.done == ["order-0"]
