"""An attached graph's approved tool runs at most once: a process SIGKILLed while the tool runs
is recovered by another, which does not run the tool again and tells the model so."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from bot import App, AssemblyError, ExecutionStatus
from bot.runtime.attached_tools import GuardedTools
from bot.runtime.graph_tools import tool_nodes
from bot.testing import FakeClock, inspect_app
from bot.testing.llm import ScriptedChatModel
from tests.databases import BACKENDS, database
from tests.langgraph.crash_worker import open_app, refund_agent, run_until_killed
from tests.langgraph.kit import Outbox, RefundApproval, Refunds, contents_of_tool_messages


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_tool_killed_midway_is_not_run_again_by_the_recovery(
    backend: str, tmp_path: Path
) -> None:
    checkpoints, side_effects = tmp_path / "agent.db", tmp_path / "refunds.txt"
    async with database(backend, tmp_path) as url:
        out = run_until_killed(url, checkpoints, side_effects)
        [execution_id] = re.findall(r"execution (\w+)", out)
        assert side_effects.read_text().splitlines() == ["refunded 40.00 on order 7"]
        model = ScriptedChatModel(component="refund").then_return("Done.")
        clock = FakeClock()
        async with refund_agent(model, checkpoints, side_effects, die=False) as graph:
            survivor = await open_app(url, Outbox(), clock)
            async with survivor:
                survivor.langgraph("refund-agent", graph, role=RefundApproval)
                await clock.advance(timedelta(seconds=61))  # the dead lease expires: recovery
                done = await survivor.get_result(execution_id, tenant_id="acme")
    assert done.status is ExecutionStatus.COMPLETED
    assert side_effects.read_text().splitlines() == ["refunded 40.00 on order 7"]  # once
    [told] = contents_of_tool_messages(model)
    assert told.startswith("Tool error: the call to refund may or may not have run")
    assert "was not run again" in told


async def test_a_tool_node_whose_tools_cannot_be_guarded_is_refused_at_attach(app: App) -> None:
    graph = StateGraph(MessagesState)
    sync_only = ToolNode([Refunds().tool()], wrap_tool_call=lambda call, run: run(call))
    graph.add_node("tools", sync_only)
    graph.add_edge(START, "tools")
    with pytest.raises(AssemblyError) as refused:
        app.langgraph(
            "refund-agent", graph.compile(checkpointer=InMemorySaver()), role=RefundApproval
        )
    assert refused.value.rules == ["langgraph.tool-node"]
    assert "awrap_tool_call" in str(refused.value)


async def test_the_tools_of_a_subgraph_are_guarded_and_known_too(app: App) -> None:
    """A compiled graph added as a node of another (an agent inside a workflow): its tool
    node is found through LangGraph's ``get_subgraphs``, guarded, and its tools registered
    (their schemas validate edits) as for a top-level one."""
    inner = StateGraph(MessagesState)
    inner.add_node("tools", ToolNode([Refunds().tool()]))
    inner.add_edge(START, "tools")
    outer = StateGraph(MessagesState)
    outer.add_node("agent", inner.compile())
    outer.add_edge(START, "agent")
    compiled = outer.compile(checkpointer=InMemorySaver())

    [node] = tool_nodes(compiled)
    assert node._awrap_tool_call is None  # not guarded before it is attached
    app.langgraph("nested-agent", compiled, role=RefundApproval)
    assert isinstance(node._awrap_tool_call, GuardedTools)
    assembly = inspect_app(app).runtime.assembly
    binding = assembly.binding_of("refund", agent="nested-agent", role="refund-approval-channel")
    assert binding is not None and binding.tool_schema is not None
    assert set(binding.tool_schema.model_fields) == {"order_id", "amount", "email"}
