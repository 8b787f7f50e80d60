"""A workflow as the root LangGraph graph: start → each agent in turn → finish."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel, ValidationError

from bot.components.specs import (
    AgentSpec,
    Flow,
    FlowStep,
    LaunchStep,
    WorkflowFinishSpec,
    WorkflowSpec,
)
from bot.core.errors import StepFailedError
from bot.runtime.frame import checkpoint_ns, frame_of
from bot.runtime.launch import GraphLookup, Launch
from bot.runtime.services import Runtime


class WorkflowState(TypedDict, total=False):
    input: dict[str, Any]
    text: str
    output: dict[str, Any]


def _text_of(value: Mapping[str, Any]) -> str:
    text = value.get("text")
    return text if isinstance(text, str) and len(value) == 1 else json.dumps(dict(value))


def _content_text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
    return "".join(parts)


def finish_output(finish: type[BaseModel], text: str) -> BaseModel:
    """The finish DTO from the last agent's answer: JSON of the DTO, or plain text."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            return finish.model_validate(json.loads(stripped))
        except (ValueError, ValidationError):
            pass
    fields = finish.model_fields
    if len(fields) == 1:
        (name,) = fields
        try:
            return finish.model_validate({name: text})
        except ValidationError:
            pass
    raise StepFailedError(f"the answer is not a valid {finish.__name__}: {text[:200]!r}")


def build_workflow_graph(
    runtime: Runtime,
    spec: WorkflowSpec,
    flow: Flow,
    agents: Mapping[type, AgentSpec],
    graphs: GraphLookup,
    finish: WorkflowFinishSpec,
    checkpointer: BaseCheckpointSaver[Any] | None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The graph of a workflow; without a checkpointer it runs as a child (inherits the root's)."""
    graph = StateGraph(WorkflowState)

    def start_node(state: WorkflowState) -> dict[str, Any]:
        return {"text": _text_of(state.get("input", {}))}

    graph.add_node("start", start_node)
    graph.add_edge(START, "start")
    previous = "start"
    for index, step in enumerate(flow.steps):
        if isinstance(step, FlowStep):
            node = f"agent_{index}"
            graph.add_node(node, _agent_node(graphs.agents[step.agent], agents[step.agent]))
        else:
            node = f"launch_{index}"
            graph.add_node(node, _launch_node(runtime, graphs, step))
        graph.add_edge(previous, node)
        previous = node

    def finish_node(state: WorkflowState, config: RunnableConfig) -> dict[str, Any]:
        frame = frame_of(config)
        try:
            output = finish_output(finish.output, state.get("text", ""))
        except StepFailedError as error:
            error.execution_id = frame.execution_id
            raise
        return {"output": output.model_dump(mode="json")}

    graph.add_node("finish", finish_node)
    graph.add_edge(previous, "finish")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer, name=spec.name)


def _launch_node(runtime: Runtime, graphs: GraphLookup, step: LaunchStep) -> Any:
    async def run_launch(state: WorkflowState, config: RunnableConfig) -> dict[str, Any]:
        launch = Launch(runtime, graphs, step, frame_of(config), checkpoint_ns(config))
        return {"text": await launch.run(state.get("text", ""))}

    return run_launch


def _agent_node(agent_graph: CompiledStateGraph[Any, Any, Any, Any], spec: AgentSpec) -> Any:
    async def run_agent(state: WorkflowState) -> dict[str, Any]:
        # the subgraph resumes from its own checkpoint: earlier model calls are not repeated
        result = await agent_graph.ainvoke(
            {"messages": [HumanMessage(content=state.get("text", ""))], "iterations": 0}
        )
        last = result["messages"][-1]
        text = _content_text(last) if isinstance(last, AIMessage) else ""
        return {"text": text}

    run_agent.__name__ = f"run_{spec.name.replace('-', '_')}"
    return run_agent
