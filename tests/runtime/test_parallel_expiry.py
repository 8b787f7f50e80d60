"""Expiry in parallel launches and children: a question that expires is closed like any other
closing, in a FailFast launch (its step fails: the siblings' questions are withdrawn), in a
quorum (the model reads that nobody approved in time; the quorum is met and the rest withdrawn)
and in a child workflow (swept with its root's tree)."""

from __future__ import annotations

from datetime import timedelta

from bot import ExecutionStatus, PauseResolution, WorkflowStartText
from tests.conftest import MakeOffice, Office
from tests.parallel_app import (
    EXPIRY,
    ExpiringApplication,
    ExpiringFailFastWorkflow,
    ExpiringParentWorkflow,
    ExpiringQuorumWorkflow,
)


async def _run(office: Office, workflow: type, asks: int = 2) -> str:
    result = await office.app.execute(
        workflow, WorkflowStartText(text="refund 5"), tenant_id="acme", owner_id="U1"
    )
    assert result.status is ExecutionStatus.PAUSED and len(result.pending) == asks
    await office.clock.advance(EXPIRY + timedelta(seconds=10))  # a sweep after the expiry
    return str(result.execution_id)


def _closings(office: Office) -> dict[str, PauseResolution]:
    return {w.value.tool: w.resolution for w in office.inbox.withdrawals}


async def test_an_expiry_that_fails_its_step_stops_a_fail_fast_launch(
    make_office: MakeOffice,
) -> None:
    office = await make_office(ExpiringApplication)
    execution_id = await _run(office, ExpiringFailFastWorkflow)

    assert _closings(office) == {
        "failing-on-expiry-refund-tool": PauseResolution.EXPIRED,
        "refund-card-tool": PauseResolution.WITHDRAWN,
    }
    result = await office.app.get_result(execution_id, tenant_id="acme", record=True)
    assert result.status is ExecutionStatus.FAILED
    assert result.record is not None
    assert {e.resolution for e in result.record.pauses} == {
        PauseResolution.EXPIRED,
        PauseResolution.WITHDRAWN,
    }


async def test_an_expired_branch_counts_toward_a_quorum(make_office: MakeOffice) -> None:
    office = await make_office(ExpiringApplication)
    execution_id = await _run(office, ExpiringQuorumWorkflow)

    assert _closings(office) == {
        "reading-expiry-refund-tool": PauseResolution.EXPIRED,
        "refund-card-tool": PauseResolution.WITHDRAWN,
    }
    result = await office.app.get_result(execution_id, tenant_id="acme")
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output is not None
    assert "nobody approved the call" in str(result.output["text"])
    assert office.ledger.runs == []


async def test_a_childs_question_expires_as_the_roots_and_the_root_completes(
    make_office: MakeOffice,
) -> None:
    """A child workflow's pause is the root's: its expiry is swept on the root's tree, the
    child's model reads that nobody approved in time, and the root completes."""
    office = await make_office(ExpiringApplication)
    execution_id = await _run(office, ExpiringParentWorkflow, asks=1)

    assert _closings(office) == {"reading-expiry-refund-tool": PauseResolution.EXPIRED}
    result = await office.app.get_result(execution_id, tenant_id="acme", record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert "nobody approved the call" in str(result.output)
    assert result.record is not None
    [child] = result.record.children
    [entry] = child.pauses
    assert entry.resolution is PauseResolution.EXPIRED and entry.responder is None
    assert office.ledger.runs == []
