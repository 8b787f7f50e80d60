"""What every driver reads behind the channel the same way: what the tool ran with, what the
agent read back, the audit record; and the attached LangChain agent the GRAPH scenario asks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain.agents.middleware.human_in_the_loop import DecisionType, InterruptOnConfig
from langgraph.checkpoint.memory import InMemorySaver

from bot import App, ExecutionResult, ExecutionStatus, PauseResolution
from bot.components.specs import spec_of
from bot.runtime.withdrawals import withdraw
from bot.store.closings import Withdrawn
from bot.testing import ScriptedChatModel, call_tool, inspect_app
from tests.conformance.driver import Asked, Kind, Scenario
from tests.langgraph.kit import (
    Refunds,
    contents_of_tool_messages,
    one_refund,
    refund_agent,
    tool_calls,
)
from tests.office import Ledger

REQUEST = "Please refund order 7, the customer was charged twice"
"""What the requester asks, in their words (the workflow's start text, the graph's message)."""
GRAPH_ASK = {"messages": [{"role": "user", "content": REQUEST}]}
GRAPH_TOOL = "refund"
REFUND_ARGUMENTS = {"order_id": "7", "amount": 30}
LARGE_REFUND_ARGUMENTS = {"order_id": "7", "amount": 1234.5}
EXPENSE = {"purpose": "taxi", "amount": 12}
SECRET = "carol.secret@example.com"
"""The refund's ``Sensitive`` customer e-mail, in every office."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NativeQuestion:
    """How a channel's office asks one scenario with its own tool: who asks, who answers."""

    tool: type
    arguments: Mapping[str, object]
    ran_as: str
    """What the tool's runs are named in the ``Ledger``."""
    owner: str
    """Who starts the work."""
    approver: str
    """Who the question is asked of."""

    @property
    def tool_name(self) -> str:
        spec = spec_of(self.tool)
        assert spec is not None
        return spec.name


@dataclass
class Behind:
    """One test's App and what it did: the office's ``Ledger`` (native tools, by the name they
    record) and, once a GRAPH was asked, the attached agent's tool and model."""

    app: App
    ledger: Ledger
    llm: ScriptedChatModel
    tenant: str
    ran_as: str = "refund"
    """Which of the ledger's runs are the question's tool's (``Ledger.runs`` names)."""
    graph: tuple[Refunds, ScriptedChatModel] | None = None
    asked: list[Asked] = field(default_factory=list)

    def runs(self) -> list[dict[str, object]]:
        if self.graph is not None:
            return list(self.graph[0].runs)
        return [ran for name, ran in self.ledger.runs if name == self.ran_as]

    def agent_read(self) -> list[str]:
        model = self.llm if self.graph is None else self.graph[1]
        return contents_of_tool_messages(model)

    async def audit(self, asked: Asked) -> str:
        result = await self.app.get_result(asked.execution_id, tenant_id=self.tenant, record=True)
        assert result.record is not None
        return json.dumps(dataclasses.asdict(result.record), default=str, ensure_ascii=False)

    async def ask_native(
        self,
        question: NativeQuestion,
        run: Callable[[str], Awaitable[ExecutionResult]],
        *,
        final: str,
    ) -> ExecutionResult:
        """Script the office's agent to call ``question``'s tool (then say ``final``) and start
        the work as ``question.owner`` with ``run(owner)``."""
        self.ran_as = question.ran_as
        self.llm.then_return(call_tool(question.tool, dict(question.arguments)), final)
        return await run(question.owner)

    async def withdraw(self, asked: Asked) -> None:
        """Close the question as no longer needed and tell its channel, as a parallel launch
        does when a sibling failed or a quorum was reached."""
        inspector = inspect_app(self.app)
        closed = await inspector.store.close(
            asked.pause_id, Withdrawn(), at=self.app.clock.now(), tenant_id=self.tenant
        )
        assert closed is not None
        await withdraw(inspector.runtime, closed, PauseResolution.WITHDRAWN)

    async def attach_graph(
        self, role: type, allowed: Sequence[Kind], *, owner: str, secret: bool = False
    ) -> ExecutionResult:
        """A LangChain agent over a refund tool, attached with ``role``, asked one refund
        (``secret``: with the ``Sensitive`` e-mail in the call, and the middleware's own
        description)."""
        kinds = [kind.value for kind in allowed]
        refunds = Refunds()
        if secret:
            model = ScriptedChatModel(component="refund").then_return(
                tool_calls(("refund", {"order_id": "7", "amount": 40, "email": SECRET})), "Done."
            )
            graph = _described_by_the_middleware(model, refunds, kinds)
        else:
            model = one_refund()
            graph = refund_agent(model, refunds, allowed=kinds)
        self.graph = (refunds, model)
        agent = self.app.langgraph("refund-agent", graph, role=role)
        result = await agent.ainvoke(
            GRAPH_ASK, thread_id=f"graph-{len(self.asked)}", tenant_id=self.tenant, owner_id=owner
        )
        assert result.status is ExecutionStatus.PAUSED
        return result

    def keep(
        self,
        scenario: Scenario,
        result: ExecutionResult,
        *,
        pause_id: str,
        tool: str,
        approver: str,
    ) -> Asked:
        asked = Asked(
            scenario=scenario,
            pause_id=pause_id,
            thread_id=result.thread_id,
            execution_id=result.execution_id,
            tool=tool,
            approver=approver,
        )
        self.asked.append(asked)
        return asked


def _described_by_the_middleware(
    model: ScriptedChatModel, refunds: Refunds, allowed: Sequence[str]
) -> Any:
    """LangChain's agent over the refund tool, its middleware giving no description: it says
    its own, which repeats the call's arguments."""
    config: InterruptOnConfig = {"allowed_decisions": [cast(DecisionType, k) for k in allowed]}
    approval: HumanInTheLoopMiddleware[Any, Any, Any] = HumanInTheLoopMiddleware(
        interrupt_on={GRAPH_TOOL: config}
    )
    return create_agent(
        model, tools=[refunds.tool()], middleware=[approval], checkpointer=InMemorySaver()
    )
