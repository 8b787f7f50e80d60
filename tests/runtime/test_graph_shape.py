"""The compiled graphs carry only the state's channels, and runs paused by the previous graph
shape continue on this one (a rolling upgrade, or a pause left from yesterday)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph

import bot.wiring
from bot import App, ExecutionStatus, WorkflowStartText
from bot.runtime import agent_graph, workflow_graph
from bot.runtime.agent_graph import ToolTask, build_agent_graph
from bot.runtime.workflow_graph import build_workflow_graph
from bot.testing import FakeClock
from tests.conftest import NO_SETTINGS
from tests.office import ASKED, Inbox, Ledger, OfficeApplication, OfficeWorkflow
from tests.parallel_app import AllThreeWorkflow, GrandparentWorkflow, ParallelApplication
from tests.runtime.helpers import script_refund

STATE_KEYS = {"input", "text", "output", "messages", "iterations", "step"}
AGENT_KEYS = {"messages", "iterations"}


@pytest.fixture(autouse=True)
def _asked_gate() -> Iterator[None]:
    ASKED.arm()
    yield
    ASKED.disarm()


def _built(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[CompiledStateGraph[Any, Any]]]:
    """Every graph the next App builds: its workflows' (root and child) and its agents'."""
    built: dict[str, list[CompiledStateGraph[Any, Any]]] = {"workflow": [], "agent": []}

    def recording(kind: str, build: Callable[..., Any]) -> Callable[..., Any]:
        def record(*args: Any) -> Any:
            graph = build(*args)
            built[kind].append(graph)
            return graph

        return record

    monkeypatch.setattr(
        bot.wiring, "build_workflow_graph", recording("workflow", build_workflow_graph)
    )
    monkeypatch.setattr(bot.wiring, "build_agent_graph", recording("agent", build_agent_graph))
    return built


def _state_channels(graph: CompiledStateGraph[Any, Any]) -> set[str]:
    """The channels that are not LangGraph's own (tasks, the start, the edges)."""
    return {c for c in graph.channels if not c.startswith(("__", "branch:"))}


@asynccontextmanager
async def _app(application: type, url: str, inbox: Inbox, ledger: Ledger) -> AsyncIterator[App]:
    app = await App.create(
        application,
        database_url=url,
        clock=FakeClock(),
        settings=NO_SETTINGS,
        services={Inbox: inbox, Ledger: ledger},
    )
    try:
        yield app
    finally:
        await app.close()


async def test_the_graphs_carry_only_their_states_channels(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    built = _built(monkeypatch)
    url = f"sqlite+aiosqlite:///{tmp_path / 'shape.db'}"
    async with _app(ParallelApplication, url, Inbox(), Ledger()):
        pass
    assert built["workflow"] and built["agent"]
    for graph in built["workflow"]:
        assert _state_channels(graph) == STATE_KEYS, graph.name
        # a pass reads the state back only when the finish step wrote the output
        assert graph.output_channels == ["output"], graph.name
    for graph in built["agent"]:
        assert _state_channels(graph) == AGENT_KEYS


class _PreviousShape(StateGraph):  # type: ignore[type-arg]
    """The graphs as the previous version built them: a tool node's input was ``ToolTask``
    (its keys became channels), and a pass returned the whole state."""

    def __init__(self, state_schema: Any, **_schemas: Any) -> None:
        super().__init__(state_schema)

    def add_node(self, node: Any, action: Any = None, **kwargs: Any) -> Any:
        if isinstance(node, str) and node.startswith("tool"):
            kwargs.setdefault("input_schema", ToolTask)
        return super().add_node(node, action, **kwargs)


def _previous_shape(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    built = _built(monkeypatch)
    monkeypatch.setattr(workflow_graph, "StateGraph", _PreviousShape)
    monkeypatch.setattr(agent_graph, "StateGraph", _PreviousShape)
    return built


async def test_a_pause_of_the_previous_shape_is_answered_on_this_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    script_refund("refunded")
    url = f"sqlite+aiosqlite:///{tmp_path / 'upgrade.db'}"
    inbox, ledger = Inbox(), Ledger()
    with monkeypatch.context() as old:
        built = _previous_shape(old)
        async with _app(OfficeApplication, url, inbox, ledger) as app:
            assert {"call", "iteration"} <= set(built["workflow"][0].channels)
            paused = await app.execute(
                OfficeWorkflow, WorkflowStartText(text="please"), tenant_id="acme", owner_id="U1"
            )
    assert paused.status is ExecutionStatus.PAUSED
    pause_id = inbox.last("refund-card-tool").pause_id
    async with _app(OfficeApplication, url, Inbox(), ledger) as app:
        done = await app.resume(
            pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert done.status is ExecutionStatus.COMPLETED, done
    assert done.execution_id == paused.execution_id
    assert [r[0] for r in ledger.runs] == ["refund"]


async def test_parallel_branches_and_a_child_paused_by_the_previous_shape_continue(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'upgrade.db'}"
    inbox, ledger = Inbox(), Ledger()
    with monkeypatch.context() as old:
        _previous_shape(old)
        async with _app(ParallelApplication, url, inbox, ledger) as app:
            branches = await app.execute(
                AllThreeWorkflow,
                WorkflowStartText(text="refund 5"),
                tenant_id="acme",
                owner_id="U1",
            )
            child = await app.execute(
                GrandparentWorkflow,
                WorkflowStartText(text="refund 5"),
                tenant_id="acme",
                owner_id="U1",
            )
            first, second, grandchild = [
                a.pause_id for a in inbox.asks if a.value.tool == "refund-card-tool"
            ]
            # one branch answered on the previous shape: the tree rests on the other
            partial = await app.resume(
                first, decision={"approved": True}, tenant_id="acme", answered_by="m"
            )
    assert branches.status is child.status is partial.status is ExecutionStatus.PAUSED
    assert len(partial.pending) == 1
    async with _app(ParallelApplication, url, Inbox(), ledger) as app:
        done = await app.resume(
            second, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
        finished = await app.resume(
            grandchild, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert done.status is ExecutionStatus.COMPLETED and done.output is not None, done
    assert "stepper-agent: looked up 3 orders" in done.output["text"]
    assert finished.status is ExecutionStatus.COMPLETED and finished.output is not None
    assert finished.output["text"].startswith("refund:")
    runs = [r[0] for r in ledger.runs]
    assert runs.count("refund") == 3 and runs.count("lookup") == 3  # nothing ran twice
