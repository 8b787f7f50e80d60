"""The whole path on a SQLite file and on PostgreSQL, across App restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import App, ExecutionStatus
from bot.testing import FakeClock
from tests.conftest import NO_SETTINGS
from tests.databases import BACKENDS, database
from tests.office import Inbox, Ledger, OfficeApplication
from tests.runtime.helpers import EXPENSE, REFUND, script_refund_and_expense


async def _app(url: str, clock: FakeClock, inbox: Inbox, ledger: Ledger) -> App:
    return await App.create(
        OfficeApplication,
        database_url=url,
        clock=clock,
        settings=NO_SETTINGS,
        services={Inbox: inbox, Ledger: ledger},
    )


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_pause_survives_a_restart(backend: str, tmp_path: Path) -> None:
    clock, inbox, ledger = FakeClock(), Inbox(), Ledger()
    script_refund_and_expense("finished")
    async with database(backend, tmp_path) as url:
        async with await _app(url, clock, inbox, ledger) as first:
            from bot import WorkflowStartText
            from tests.office import OfficeWorkflow

            paused = await first.execute(
                OfficeWorkflow, WorkflowStartText(text="go"), tenant_id="acme", owner_id="U1"
            )
            assert paused.status is ExecutionStatus.PAUSED
        # a new process: nothing of the first App's memory is left
        async with await _app(url, clock, inbox, ledger) as second:
            [pending_expense] = [
                p for p in await second.list_pending(tenant_id="acme") if p.pause_id
            ]
            refund_id = inbox.last("refund-card-tool").pause_id
            partial = await second.resume(
                refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
            )
            assert partial.status is ExecutionStatus.PAUSED
        async with await _app(url, clock, inbox, ledger) as third:
            done = await third.resume(
                pending_expense.pause_id or "",
                decision={"approved": True},
                tenant_id="acme",
                owner_id="U1",
                record=True,
            )
            assert done.status is ExecutionStatus.COMPLETED
            assert done.output == {"text": "finished"}
            assert done.record is not None and len(done.record.pauses) == 2
    assert ledger.runs == [("refund", REFUND), ("expense", EXPENSE)]
    assert len(inbox.asks) == 2  # sent once each, across three processes' worth of Apps
