"""A LangChain agent (``create_agent`` with ``HumanInTheLoopMiddleware``) attached to the web
office, its refunds asked on the web."""

from __future__ import annotations

from collections.abc import Sequence

from bot import ExecutionStatus
from bot.testing import ScriptedChatModel
from tests.langgraph.kit import Refunds, one_refund, refund_agent
from tests.web.conftest import WebWorld
from tests.web.office import ALICE, OWNER, TENANT, RefundApprovalChannel

ASK = {"messages": [{"role": "user", "content": "refund order 7"}]}
GRAPH_TOOL = "refund"
ANSWER = "Order 7 was refunded yesterday; nothing to do."
"""An answer given in place of the tool."""


async def attach_refunds(
    world: WebWorld, allowed: Sequence[str]
) -> tuple[Refunds, ScriptedChatModel, str]:
    """A LangChain agent whose refunds are asked on the web, paused on one: its tool, its model
    and Alice's link to the question."""
    refunds, model = Refunds(), one_refund()
    graph = refund_agent(model, refunds, allowed=allowed)
    agent = world.app.langgraph("refund-agent", graph, role=RefundApprovalChannel)
    result = await agent.ainvoke(ASK, thread_id="t1", tenant_id=TENANT, owner_id=OWNER)
    assert result.status is ExecutionStatus.PAUSED
    return refunds, model, world.link(ALICE, GRAPH_TOOL)
