"""A workflow as the root LangGraph graph: start → each agent in turn → finish."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel, ValidationError

from bot.components.joins import matches
from bot.components.specs import (
    AgentSpec,
    Flow,
    FlowStep,
    LaunchStep,
    WorkflowFinishSpec,
    WorkflowSpec,
)
from bot.core.errors import StepFailedError
from bot.runtime.agent_graph import StepState, add_agent_step
from bot.runtime.frame import checkpoint_ns, frame_of
from bot.runtime.launch import GraphLookup, Launch
from bot.runtime.services import Runtime


class WorkflowState(StepState, total=False):
    """A workflow's state: its input, the text passed from step to step, its output, and the
    conversation of the agent step running now."""


class WorkflowOutput(TypedDict, total=False):
    """What a pass of a workflow's graph returns: only its output, once the finish step wrote
    it. LangGraph then reads the state back only on the pass that ends, not after every step
    (the state and its checkpoints keep every key of ``WorkflowState``)."""

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

    An agent step adds its model and tool nodes to this graph; a launch (or an agent step with
    ``on_error``) is one node. Nothing else: the start input and the finish output are read in
    the first and the last step, since every node is a checkpoint per pass.
    """
    graph = StateGraph(WorkflowState, output_schema=WorkflowOutput)
    last = len(flow.steps) - 1

    def entry(index: int) -> str:
        if index > last:
            return END
        step = flow.steps[index]
        flat = isinstance(step, FlowStep) and not step.on_error
        return f"model_{index}" if flat else f"step_{index}"

    def finish_text(text: str, config: RunnableConfig) -> dict[str, Any]:
        return _finish(finish, text, config)

    for index, step in enumerate(flow.steps):
        ends = finish if index == last else None
        if isinstance(step, FlowStep) and not step.on_error:
            add_agent_step(
                graph,
                index,
                graphs.loops[step.agent],
                after=entry(index + 1),
                text_of=_current_text,
                finish=finish_text if ends else None,
            )
            continue
        if isinstance(step, FlowStep):
            body = _agent_body(graphs.agents[step.agent])
        else:
            body = _launch_body(runtime, graphs, step)
        node = entry(index)
        graph.add_node(node, _step_node(_with_error_handlers(body, step.on_error), ends))
        graph.add_edge(node, entry(index + 1))
    graph.add_edge(START, entry(0))
    return graph.compile(checkpointer=checkpointer, name=spec.name)


def _current_text(state: Mapping[str, Any]) -> str:
    text = state.get("text")
    return text if isinstance(text, str) else _text_of(state.get("input", {}))


def _finish(finish: WorkflowFinishSpec, text: str, config: RunnableConfig) -> dict[str, Any]:
    try:
        output = finish_output(finish.output, text)
    except StepFailedError as error:
        error.execution_id = frame_of(config).execution_id
        raise
    return output.model_dump(mode="json")


StepBody = Callable[[str, RunnableConfig], Awaitable[str]]


def _step_node(body: StepBody, finish: WorkflowFinishSpec | None) -> Any:
    async def run_step(state: WorkflowState, config: RunnableConfig) -> dict[str, Any]:
        text = await body(_current_text(state), config)
        if finish is None:
            return {"text": text}
        return {"text": text, "output": _finish(finish, text, config)}

    return run_step


def _with_error_handlers(
    body: StepBody, handlers: tuple[tuple[type[BaseException], Any], ...]
) -> StepBody:
    if not handlers:
        return body

    async def guarded(text: str, config: RunnableConfig) -> str:
        try:
            return await body(text, config)
        except GraphInterrupt:
            raise
        except Exception as error:
            for error_class, handler in handlers:
                if matches(error, error_class):
                    outcome = handler(error)
                    return str(await outcome if inspect.isawaitable(outcome) else outcome)
            raise

    return guarded


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
