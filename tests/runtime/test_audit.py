"""Spec: "Who answered: result.record.pauses" — the permanent audit trail of the root."""

from __future__ import annotations

from datetime import datetime, timedelta

from bot import ExecutionStatus, PauseAnswerer, PauseResolution, ToolCallApprovalDecision
from bot.core.sensitive import MASK
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund_and_expense


async def test_record_lists_every_resolved_pause_in_order_asked(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    asked = office.clock.now()
    refund_id = office.inbox.last("refund-card-tool").pause_id
    expense_id = next(p.pause_id for p in first.pending if p.pause_id)
    assert expense_id is not None
    await office.clock.advance(timedelta(minutes=1))
    await office.app.resume(
        expense_id,
        decision={"approved": False, "reason": "no taxis"},
        tenant_id="acme",
        owner_id="U1",
    )
    await office.clock.advance(timedelta(minutes=1))
    result = await office.app.resume(
        refund_id,
        decision=ToolCallApprovalDecision(
            approved=True, override_arguments={"amount": 10.0, "email": "boss@example.com"}
        ),
        tenant_id="acme",
        answered_by="manager-17",
        record=True,
    )
    assert result.status is ExecutionStatus.COMPLETED
    assert result.record is not None
    refund, expense = result.record.pauses  # asked order, not answered order
    assert refund.pause_id is None  # a CHANNEL pause's id stays with its channel
    assert refund.answered_by is PauseAnswerer.CHANNEL
    assert refund.role == "refund-approval-channel"
    assert refund.responder == "manager-17"
    assert refund.resolution is PauseResolution.REPLIED
    assert refund.execution_id == result.execution_id
    assert refund.step.agent == "office-agent"
    assert refund.step.tool == "refund-card-tool"
    assert refund.step.tool_call_id
    assert refund.step.tool_loop_iteration == 1
    assert datetime.fromisoformat(refund.asked_at) == asked
    assert datetime.fromisoformat(refund.resolved_at) == asked + timedelta(minutes=2)
    assert refund.decision == {
        "approved": True,
        "reason": None,
        "override_arguments": {"order_id": "7", "amount": 10.0, "email": MASK},
    }
    assert expense.pause_id == expense_id  # a THREAD_OWNER pause's id is the owner's
    assert expense.responder == "U1"
    assert expense.decision == {"approved": False, "reason": "no taxis", "override_arguments": None}


async def test_cancelled_entries_have_no_responder_or_decision(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    await office.app.cancel(first.thread_id, tenant_id="acme")
    result = await office.app.get_result(first.execution_id, tenant_id="acme", record=True)
    assert result.status is ExecutionStatus.CANCELLED
    assert result.record is not None
    assert [e.resolution for e in result.record.pauses] == [PauseResolution.CANCELLED] * 2
    assert all(e.responder is None and e.decision is None for e in result.record.pauses)


async def test_each_pause_is_written_once(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    refund_id = office.inbox.last("refund-card-tool").pause_id
    await office.app.resume(
        refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    await office.app.cancel(first.thread_id, tenant_id="acme")
    result = await office.app.get_result(first.execution_id, tenant_id="acme", record=True)
    assert result.record is not None
    assert len(result.record.pauses) == 2
    assert sorted(e.resolution for e in result.record.pauses) == [
        PauseResolution.CANCELLED,
        PauseResolution.REPLIED,
    ]
