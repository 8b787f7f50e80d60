"""An agent as a LangGraph subgraph: a model node and one task per tool call.

Each tool call is its own task (``Send``), so two approvals asked in one model turn pause at once,
and a call that finished is never re-run when only its sibling is answered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import ToolCall
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from bot.components.specs import AgentSpec
from bot.core.budget import ModelPrice
from bot.core.errors import AgentFailedError, CountersignError
from bot.core.field_errors import failure_text
from bot.runtime.assembly import ToolBinding
from bot.runtime.frame import RunFrame, checkpoint_ns, frame_of
from bot.runtime.ledger import usage_of
from bot.runtime.question_context import graph_context
from bot.runtime.seam import PausePlace
from bot.runtime.services import Runtime
from bot.runtime.tool_calls import Said, call_tool, tool_error


class AgentState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    iterations: int


class ToolTask(TypedDict):
    call: ToolCall
    iteration: int
    position: NotRequired[int]  # the call's place in its model turn
    asked_at: NotRequired[str]  # ISO 8601: when the model asked (one moment for the turn)
    request: NotRequired[str]  # what the person asked: the latest human message before the turn
    reason: NotRequired[str]  # the model's own words in the turn that made the call


def tool_schema(binding: ToolBinding) -> dict[str, Any]:
    spec = binding.spec
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.input.model_json_schema(),
        },
    }


class AgentLoop:
    """One agent's model turn and tool calls, shared by its two graph shapes.

    In a workflow's own sequence of steps the agent's nodes are added to the workflow's graph
    (``add_agent_step``: no nested graph, fewer checkpoints per pass); as a branch of a launch it
    is a subgraph of its own (``build_agent_graph``).
    """

    def __init__(
        self,
        runtime: Runtime,
        spec: AgentSpec,
        chat_model: BaseChatModel,
        tools: Mapping[str, ToolBinding],
        *,
        price: ModelPrice | None = None,
    ) -> None:
        self.runtime = runtime
        self.spec = spec
        self.tools = tools
        self._price = price
        self._caller = f"agent:{spec.name}"
        self._bound: Any = (
            chat_model.bind_tools([tool_schema(b) for b in tools.values()]) if tools else chat_model
        )

    async def call_model(
        self, history: Sequence[AnyMessage], iteration: int, frame: RunFrame
    ) -> AIMessage:
        spec = self.spec
        if iteration >= spec.max_tool_loop_iterations:
            raise AgentFailedError(
                f"the agent {spec.name} called tools {iteration} times without finishing",
                agent=spec.name,
                execution_id=frame.execution_id,
            )
        messages = [SystemMessage(content=spec.prompt), *history]
        metrics = self.runtime.metrics
        try:
            reply = await self._bound.ainvoke(messages)
        except GraphInterrupt:
            raise
        except CountersignError:
            metrics.model_call(self._caller, "failed")
            raise
        except Exception as error:
            metrics.model_call(self._caller, "failed")
            raise AgentFailedError(
                f"the model of the agent {spec.name} failed: {failure_text(error)}",
                agent=spec.name,
                execution_id=frame.execution_id,
            ) from error
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        metrics.model_call(self._caller, "ok", cost=self._cost(reply))
        return reply

    def _cost(self, reply: AIMessage) -> float:
        """What the call cost: the tokens the model reports at its provider's price, else 0."""
        if self._price is None:
            return 0.0
        input_tokens, output_tokens = usage_of(reply)
        return self._price.cost(input_tokens=input_tokens, output_tokens=output_tokens)

    def tool_sends(self, node: str, messages: Sequence[AnyMessage], iteration: int) -> list[Send]:
        """One task per tool call of the model's last turn, each knowing its place in the turn
        and the moment it was asked, so the pauses they ask are listed in the model's order."""
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return []
        asked_at = self.runtime.clock.now().isoformat()
        request, reason = graph_context({"messages": list(messages)}, tool="", arguments={})
        sends = []
        for i, call in enumerate(last.tool_calls):
            task = ToolTask(call=call, iteration=iteration, position=i, asked_at=asked_at)
            if request:
                task["request"] = request
            if reason:
                task["reason"] = reason
            sends.append(Send(node, task))
        return sends

    async def call_tool(self, task: ToolTask, config: RunnableConfig) -> ToolMessage:
        call = task["call"]
        binding = self.tools.get(call["name"])
        if binding is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return tool_error(call, call["name"], f"no tool named {call['name']} (known: {known})")
        frame = frame_of(config)
        place = PausePlace(
            agent=self.spec.name,
            checkpoint_ns=checkpoint_ns(config),
            tool_loop_iteration=task["iteration"],
            item_index=frame.item_index,
            child_execution_id=frame.child_execution_id,
            asked_at=datetime.fromisoformat(task["asked_at"]) if "asked_at" in task else None,
            position=task.get("position"),
        )
        said = Said(request=task.get("request"), reason=task.get("reason"))
        return await call_tool(self.runtime, binding, frame, call, place, said=said)


def build_agent_graph(loop: AgentLoop) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The agent as a graph of its own (a branch of a launch)."""

    async def model_node(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        iteration = state.get("iterations", 0)
        reply = await loop.call_model(state["messages"], iteration, frame_of(config))
        return {"messages": [reply], "iterations": iteration + 1}

    # async, awaiting nothing: no hand-off to a thread per turn (see add_agent_step's route)
    async def route(state: AgentState) -> list[Send] | str:
        return loop.tool_sends("tool", state["messages"], state.get("iterations", 0)) or END

    graph = StateGraph(AgentState)
    graph.add_node("model", model_node)
    graph.add_node("tool", _tool_node(loop))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["tool", END])
    graph.add_edge("tool", "model")
    return graph.compile()


def _tool_node(loop: AgentLoop) -> Any:
    """The node that runs one tool call, its ``ToolTask`` given by a ``Send``.

    Its input is not annotated as ``ToolTask``: LangGraph would add each of the task's keys to
    the graph as a channel of its own (never written: a ``Send`` hands the task over directly),
    and every step, checkpoint load and copy would carry them.
    """

    async def tool_node(task: Any, config: RunnableConfig) -> dict[str, Any]:
        sent: ToolTask = task
        return {"messages": [await loop.call_tool(sent, config)]}

    return tool_node


class StepState(TypedDict, total=False):
    """The keys an agent step reads and writes in a workflow's state."""

    input: dict[str, Any]
    text: str
    output: dict[str, Any]
    messages: Annotated[list[AnyMessage], add_messages]
    iterations: int
    step: int


StepText = Callable[[Mapping[str, Any]], str]
FinishText = Callable[[str, RunnableConfig], dict[str, Any]]


def add_agent_step(
    graph: StateGraph[Any, Any, Any, Any],
    index: int,
    loop: AgentLoop,
    *,
    after: str,
    text_of: StepText,
    finish: FinishText | None,
) -> str:
    """Add the agent's nodes for step ``index`` to a workflow's graph; returns the entry node.

    The step's conversation starts afresh from the previous step's text; its final answer is
    the step's text (and, for the last step, the workflow's output).
    """
    model_name, tool_name = f"model_{index}", f"tool_{index}"

    async def model_node(state: StepState, config: RunnableConfig) -> dict[str, Any]:
        entering = state.get("step") != index
        if entering:
            opening = HumanMessage(content=text_of(state))
            history: list[AnyMessage] = [opening]
            reset: list[Any] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), opening]
            iteration = 0
        else:
            history, reset, iteration = state["messages"], [], state.get("iterations", 0)
        reply = await loop.call_model(history, iteration, frame_of(config))
        update: dict[str, Any] = {"messages": [*reset, reply], "iterations": iteration + 1}
        if entering:  # written once a step: a write of the same value is a checkpoint row too
            update["step"] = index
        if not reply.tool_calls:
            text = content_text(reply)
            update["text"] = text
            if finish is not None:
                update["output"] = finish(text, config)
        return update

    async def route(state: StepState) -> list[Send] | str:
        """Async though it awaits nothing: LangGraph runs a plain function given as an edge in
        a worker thread when the graph runs async (``run_in_executor``), a hand-off there and
        back for every model turn; a coroutine function it awaits on the loop."""
        messages = state.get("messages", [])
        return loop.tool_sends(tool_name, messages, state.get("iterations", 0)) or after

    graph.add_node(model_name, model_node)
    graph.add_node(tool_name, _tool_node(loop))
    graph.add_conditional_edges(model_name, route, [tool_name, after])
    graph.add_edge(tool_name, model_name)
    return model_name


def content_text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
