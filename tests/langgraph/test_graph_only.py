"""An application of attached graphs and roles alone: no placeholder workflow, agent or model."""

from __future__ import annotations

import pytest

from bot import App, AssemblyError, ExecutionStatus, application
from tests.langgraph.conftest import ASK, MEMORY
from tests.langgraph.kit import (
    Outbox,
    OutboxRefundApproval,
    RefundApproval,
    Refunds,
    one_refund,
    refund_agent,
)


@application(name="graphs-only", channels=[OutboxRefundApproval])
class GraphsOnly: ...


@application(name="nothing-at-all")
class NothingAtAll: ...


async def test_an_application_of_roles_alone_serves_an_attached_graph() -> None:
    outbox, refunds = Outbox(), Refunds()
    async with await App.create(GraphsOnly, database_url=MEMORY, services={Outbox: outbox}) as app:
        agent = app.langgraph(
            "refund-agent", refund_agent(one_refund(), refunds), role=RefundApproval
        )
        paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
        assert paused.status is ExecutionStatus.PAUSED
        [ask] = outbox.asks

        done = await app.resume(
            ask.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M1"
        )

    assert done.status is ExecutionStatus.COMPLETED
    assert refunds.runs == [{"order_id": "7", "amount": 40}]


async def test_an_application_with_neither_workflows_nor_channels_is_refused() -> None:
    with pytest.raises(AssemblyError) as refused:
        await App.create(NothingAtAll, database_url=MEMORY)

    [violation] = refused.value.violations
    assert violation.rule == "application.no-workflows"
    assert "channels=[...]" in violation.message
