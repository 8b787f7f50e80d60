"""The middleware's ``respond`` decision: a person's answer in place of the tool's result."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import ValidationError

from bot import App, ExecutionStatus, Refused, ToolCallApprovalDecision
from bot.core.dtos import ToolCallApprovalAsk, decision_kind
from tests.langgraph.conftest import ASK
from tests.langgraph.kit import (
    Outbox,
    RefundApproval,
    Refunds,
    contents_of_tool_messages,
    one_refund,
    refund_agent,
)

ANSWER = "Order 7 was refunded yesterday; nothing to do."


@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_a_response_replaces_the_tools_result(
    app: App, outbox: Outbox, mode: Literal["batched", "per_call"]
) -> None:
    refunds, model = Refunds(), one_refund()
    graph = refund_agent(model, refunds, mode=mode, allowed=("approve", "reject", "respond"))
    agent = app.langgraph("refund-agent", graph, role=RefundApproval)
    await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    [ask] = outbox.asks
    assert ask.value.allowed_decisions == ("approve", "reject", "respond")

    done = await app.resume(
        ask.pause_id,
        decision={"approved": False, "response": ANSWER},
        tenant_id="acme",
        answered_by="M1",
    )

    assert done.status is ExecutionStatus.COMPLETED
    assert refunds.runs == []
    assert contents_of_tool_messages(model) == [ANSWER]


async def test_a_response_is_refused_where_the_middleware_takes_none(
    app: App, outbox: Outbox
) -> None:
    refunds = Refunds()
    agent = app.langgraph("refund-agent", refund_agent(one_refund(), refunds), role=RefundApproval)
    await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    [ask] = outbox.asks

    refused = await app.answer(
        ask.pause_id, tenant_id="acme", by="M1", decision={"approved": False, "response": ANSWER}
    )

    assert isinstance(refused, Refused)
    assert "not respond" in refused.error.message
    assert len(await app.list_pending(tenant_id="acme")) == 1


def test_a_response_is_a_decision_of_its_own_kind() -> None:
    responded = ToolCallApprovalDecision(approved=False, response=ANSWER)
    assert decision_kind(responded) == "respond"
    native = ToolCallApprovalAsk(tool="t", arguments={}, call_id="c")
    assert native.allows(ToolCallApprovalDecision(approved=False)) is True
    assert native.allows(responded) is False  # a native tool reads no response
    for invalid in (
        {"approved": True, "response": ANSWER},
        {"approved": False, "response": ANSWER, "reason": "no"},
        {"approved": False, "response": ""},
    ):
        with pytest.raises(ValidationError):
            ToolCallApprovalDecision.model_validate(invalid)
