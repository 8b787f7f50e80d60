"""LangGraph agents of your own, approved through Countersign.

Attach a compiled graph to an App and invoke it through the handle::

    agent = app.langgraph("refund-agent", compiled_graph, role=RefundApproval)
    result = await agent.ainvoke(
        {"messages": [...]}, thread_id="t1", tenant_id="acme", owner_id="U123"
    )

The graph keeps its own checkpointer. LangChain's ``HumanInTheLoopMiddleware`` interrupts
(batched or per-call) become one pause per action, sent to ``role``'s channel; inside any node,
``request_approval(tool, args, description=...)`` asks through Countersign and returns the
``ToolCallApprovalDecision``. Answer with ``App.answer`` / ``App.resume`` (Slack buttons and
thread replies included), as for any pause.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langgraph.types import interrupt

from bot.core.dtos import ToolCallApprovalDecision
from bot.core.results import ExecutionResult
from bot.runtime.attached_graphs import APPROVAL_MARK, DECISION_KINDS

__all__ = ["LangGraphAgent", "request_approval"]

Invoke = Callable[..., Awaitable[ExecutionResult]]


class LangGraphAgent:
    """A compiled graph attached to an App (``App.langgraph``)."""

    def __init__(self, name: str, invoke: Invoke) -> None:
        self._name = name
        self._invoke = invoke

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"LangGraphAgent({self._name!r})"

    async def ainvoke(
        self,
        input: Any,
        *,
        thread_id: str,
        tenant_id: str,
        owner_id: str,
        record: bool = False,
    ) -> ExecutionResult:
        """Run the graph on its thread ``thread_id`` until it ends (COMPLETED, its final state
        as ``output``) or rests with approvals waiting (PAUSED, ``pending``). While an
        execution of the thread lives (RUNNING or PAUSED), invoking again returns it as it
        stands (nothing is run or posted again) — also from another instance at the same
        moment: the store keeps one live execution per thread. Answer or cancel it first."""
        return await self._invoke(
            input, thread_id=thread_id, tenant_id=tenant_id, owner_id=owner_id, record=record
        )


def request_approval(
    tool: str,
    args: dict[str, Any],
    *,
    description: str | None = None,
    call_id: str = "",
    allowed_decisions: Sequence[str] = DECISION_KINDS,
) -> ToolCallApprovalDecision:
    """Inside a node of an attached graph: ask the graph's role to approve calling ``tool``
    with ``args``; the node pauses (a LangGraph interrupt) until someone answers, then this
    returns the decision (an edit's ``override_arguments`` merged over ``args`` and valid).

    As with any ``interrupt()``, the node runs again from its start when resumed: keep side
    effects after this call, or idempotent."""
    value = interrupt(
        {
            APPROVAL_MARK: True,
            "tool": tool,
            "args": args,
            "description": description,
            "call_id": call_id,
            "allowed_decisions": list(allowed_decisions),
        }
    )
    return ToolCallApprovalDecision.model_validate(value)
