from bot import ExecutionStatus, ToolCallApprovalDecision, WorkflowStartText
from bot.testing import call_tool, mock_llm
from tests.conftest import MakeOffice
from tests.office import BookExpenseTool, OfficeAgent, OfficeWorkflow, RefundCardTool


async def test_two_approvals_pause_and_resume(make_office: MakeOffice) -> None:
    llm = mock_llm(OfficeAgent).then_return(
        [
            call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}),
            call_tool(BookExpenseTool, {"purpose": "taxi", "amount": 12.0}),
        ],
        "all done",
    )
    office = await make_office()
    result = await office.app.execute(
        OfficeWorkflow,
        WorkflowStartText(text="refund 7, book taxi"),
        tenant_id="acme",
        owner_id="U1",
    )
    assert result.status is ExecutionStatus.PAUSED
    assert len(result.pending) == 2
    refund_id = office.inbox.last("refund-card-tool").pause_id
    expense_id = next(p.pause_id for p in result.pending if p.pause_id)
    r2 = await office.app.resume(
        refund_id,
        decision=ToolCallApprovalDecision(approved=True),
        tenant_id="acme",
        answered_by="mgr",
    )
    assert r2.status is ExecutionStatus.PAUSED
    assert len(r2.pending) == 1
    r3 = await office.app.resume(
        expense_id, decision={"approved": True}, tenant_id="acme", owner_id="U1"
    )
    assert r3.status is ExecutionStatus.COMPLETED
    assert r3.output == {"text": "all done"}
    assert [r[0] for r in office.ledger.runs] == ["refund", "expense"]
    assert len(llm.calls) == 2
