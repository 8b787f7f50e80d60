"""An agent as a LangGraph subgraph: a model node and one task per tool call.

Each tool call is its own task (``Send``), so two approvals asked in one model turn pause at once,
and a call that finished is never re-run when only its sibling is answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, SystemMessage
from langchain_core.messages.tool import ToolCall
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from bot.components.specs import AgentSpec
from bot.core.errors import AgentFailedError, CountersignError
from bot.runtime.assembly import ToolBinding
from bot.runtime.frame import checkpoint_ns, frame_of
from bot.runtime.seam import PausePlace
from bot.runtime.services import Runtime
from bot.runtime.tool_calls import call_tool, tool_error


class AgentState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    iterations: int


class ToolTask(TypedDict):
    call: ToolCall
    iteration: int


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


def build_agent_graph(
    runtime: Runtime,
    spec: AgentSpec,
    chat_model: BaseChatModel,
    tools: Mapping[str, ToolBinding],
) -> CompiledStateGraph[Any, Any, Any, Any]:
    bound: Any = (
        chat_model.bind_tools([tool_schema(b) for b in tools.values()]) if tools else chat_model
    )

    async def model_node(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        frame = frame_of(config)
        iteration = state.get("iterations", 0)
        if iteration >= spec.max_tool_loop_iterations:
            raise AgentFailedError(
                f"the agent {spec.name} called tools {iteration} times without finishing",
                agent=spec.name,
                execution_id=frame.execution_id,
            )
        messages = [SystemMessage(content=spec.prompt), *state["messages"]]
        try:
            reply = await bound.ainvoke(messages)
        except (GraphInterrupt, CountersignError):
            raise
        except Exception as error:
            raise AgentFailedError(
                f"the model of the agent {spec.name} failed: {type(error).__name__}: {error}",
                agent=spec.name,
                execution_id=frame.execution_id,
            ) from error
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        return {"messages": [reply], "iterations": iteration + 1}

    def route(state: AgentState) -> list[Send] | str:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return [
                Send("tool", ToolTask(call=call, iteration=state.get("iterations", 0)))
                for call in last.tool_calls
            ]
        return END

    async def tool_node(task: ToolTask, config: RunnableConfig) -> dict[str, Any]:
        call = task["call"]
        binding = tools.get(call["name"])
        if binding is None:
            known = ", ".join(sorted(tools)) or "none"
            message = tool_error(
                call, call["name"], f"no tool named {call['name']} (known: {known})"
            )
            return {"messages": [message]}
        frame = frame_of(config)
        place = PausePlace(
            agent=spec.name,
            checkpoint_ns=checkpoint_ns(config),
            tool_loop_iteration=task["iteration"],
            item_index=frame.item_index,
            child_execution_id=frame.child_execution_id,
        )
        message = await call_tool(runtime, binding, frame, call, place)
        return {"messages": [message]}

    graph = StateGraph(AgentState)
    graph.add_node("model", model_node)
    graph.add_node("tool", tool_node)  # type: ignore[arg-type]  # takes a Send input, not the state
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["tool", END])
    graph.add_edge("tool", "model")
    return graph.compile()
