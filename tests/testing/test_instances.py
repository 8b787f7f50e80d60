"""``test_with``: several instances on one database, as a person calls it."""

from __future__ import annotations

import pytest

from bot import ExecutionStatus, Settings, WorkflowStartText
from bot.testing import FakeClock, test_with
from tests.databases import postgres_database
from tests.office import Inbox, Ledger, OfficeApplication, OfficeWorkflow
from tests.runtime.helpers import script_refund


@pytest.mark.postgres
async def test_instances_on_postgres_share_a_key_when_none_is_set() -> None:
    """No key in the settings: the instances get one shared random key (PostgreSQL keeps no
    key file), so one answers what the other asked."""
    script_refund("finished")
    inbox, ledger = Inbox(), Ledger()
    async with (
        postgres_database() as url,
        test_with(
            OfficeApplication,
            instances=2,
            database_url=url,
            clock=FakeClock(),
            settings=Settings(),
            services={Inbox: inbox, Ledger: ledger},
        ) as (one, two),
    ):
        paused = await one.execute(
            OfficeWorkflow, WorkflowStartText(text="go"), tenant_id="acme", owner_id="U1"
        )
        assert paused.status is ExecutionStatus.PAUSED
        refund_id = inbox.last("refund-card-tool").pause_id
        done = await two.resume(
            refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
        assert done.status is ExecutionStatus.COMPLETED
    assert [name for name, _ in ledger.runs] == ["refund"]


async def test_instances_need_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        async with test_with(OfficeApplication, instances=0, database_url="sqlite://"):
            pass
