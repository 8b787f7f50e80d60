"""Scripts for the office agent used by several runtime tests."""

from __future__ import annotations

from typing import Any

from bot import ExecutionResult, WorkflowStartText
from bot.testing import ScriptedChatModel, call_tool, mock_llm
from tests.conftest import Office
from tests.office import BookExpenseTool, OfficeAgent, OfficeWorkflow, RefundCardTool

REFUND = {"order_id": "7", "amount": 30.0, "email": "jane@example.com"}
EXPENSE = {"purpose": "taxi", "amount": 12.0}


def script_refund_and_expense(*final: Any) -> ScriptedChatModel:
    """One turn that asks for a refund and an expense at once, then a final answer."""
    return mock_llm(OfficeAgent).then_return(
        [call_tool(RefundCardTool, REFUND), call_tool(BookExpenseTool, EXPENSE)],
        *(final or ("all done",)),
    )


def script_refund(*final: Any) -> ScriptedChatModel:
    return mock_llm(OfficeAgent).then_return(
        call_tool(RefundCardTool, REFUND), *(final or ("done",))
    )


async def run(office: Office, tenant_id: str = "acme", owner_id: str = "U1") -> ExecutionResult:
    return await office.app.execute(
        OfficeWorkflow,
        WorkflowStartText(text="please"),
        tenant_id=tenant_id,
        owner_id=owner_id,
    )


def tool_messages(llm: ScriptedChatModel, call: int = -1) -> list[str]:
    """The tool results the model read in one of its calls."""
    return [str(m.content) for m in llm.calls[call].messages if m.type == "tool"]
