"""An attached agent's call under a two-approval role (issue 29 audit): its audit lists every
approver with what each approved, the edit's voided approval included, as a native tool's does
(tests/runtime/test_required_approvals.py)."""

from __future__ import annotations

from bot import Answered, App, ApprovalCounted, ExecutionStatus
from tests.langgraph.conftest import ASK
from tests.langgraph.kit import Outbox, Refunds, one_refund, refund_agent
from tests.langgraph.test_required_approvals import FourEyesRefundApproval, four_eyes

__all__ = ["four_eyes"]  # the fixture, shared


async def test_an_attached_agents_audit_lists_every_approver_with_what_they_approved(
    four_eyes: App, outbox: Outbox
) -> None:
    app, refunds = four_eyes, Refunds()
    agent = app.langgraph(
        "refund-agent", refund_agent(one_refund(), refunds), role=FourEyesRefundApproval
    )
    await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    [pause_id] = outbox.pause_ids
    first = await app.answer(pause_id, tenant_id="acme", by="M1", decision={"approved": True})
    assert isinstance(first, ApprovalCounted)
    edited = await app.answer(
        pause_id,
        tenant_id="acme",
        by="M2",
        decision={"approved": True, "override_arguments": {"amount": 20}},
    )
    assert isinstance(edited, ApprovalCounted)
    done = await app.answer(pause_id, tenant_id="acme", by="M3", decision={"approved": True})
    assert isinstance(done, Answered)

    result = await app.get_result(done.root_execution_id, tenant_id="acme", record=True)
    assert result.status is ExecutionStatus.COMPLETED and result.record is not None
    [entry] = result.record.pauses
    assert entry.responder == "M3"
    assert entry.ran_with is not None and entry.ran_with["amount"] == 20.0
    assert [(a.by, a.arguments["amount"], a.edited, a.counted) for a in entry.approvals] == [
        ("M1", 40, False, False),
        ("M2", 20.0, True, True),
        ("M3", 20.0, False, True),
    ]
    assert [r["amount"] for r in refunds.runs] == [20.0]
