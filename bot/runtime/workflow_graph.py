"""A workflow as the root LangGraph graph: start → each agent in turn → finish."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
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
    """The graph of a workflow; without a checkpointer it runs as a child (inherits the root's).

    One node per step and nothing else: reading the start input and building the finish output
    happen in the first and the last step's node, since every node is a checkpoint per pass.
    """
    graph = StateGraph(WorkflowState)
    previous = START
    last = len(flow.steps) - 1
    for index, step in enumerate(flow.steps):
        if isinstance(step, FlowStep):
            node = f"agent_{index}"
            body = _agent_body(graphs.agents[step.agent])
        else:
            node = f"launch_{index}"
            body = _launch_body(runtime, graphs, step)
        graph.add_node(node, _step_node(body, finish if index == last else None))
        graph.add_edge(previous, node)
        previous = node
    graph.add_edge(previous, END)
    return graph.compile(checkpointer=checkpointer, name=spec.name)


StepBody = Callable[[str, RunnableConfig], Awaitable[str]]


def _step_node(body: StepBody, finish: WorkflowFinishSpec | None) -> Any:
    async def run_step(state: WorkflowState, config: RunnableConfig) -> dict[str, Any]:
        text = state["text"] if "text" in state else _text_of(state.get("input", {}))
        text = await body(text, config)
        if finish is None:
            return {"text": text}
        try:
            output = finish_output(finish.output, text)
        except StepFailedError as error:
            error.execution_id = frame_of(config).execution_id
            raise
        return {"text": text, "output": output.model_dump(mode="json")}

    return run_step


def _launch_body(runtime: Runtime, graphs: GraphLookup, step: LaunchStep) -> StepBody:
    async def run_launch(text: str, config: RunnableConfig) -> str:
        launch = Launch(runtime, graphs, step, frame_of(config), checkpoint_ns(config))
        return await launch.run(text)

    return run_launch


def _agent_body(agent_graph: CompiledStateGraph[Any, Any, Any, Any]) -> StepBody:
    async def run_agent(text: str, config: RunnableConfig) -> str:
        # the subgraph resumes from its own checkpoint: earlier model calls are not repeated
        result = await agent_graph.ainvoke(
            {"messages": [HumanMessage(content=text)], "iterations": 0}
        )
        last = result["messages"][-1]
        return _content_text(last) if isinstance(last, AIMessage) else ""

    return run_agent
