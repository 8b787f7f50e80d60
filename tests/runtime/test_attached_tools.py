"""The guard on an attached graph's tools (``bot.runtime.attached_tools``): a tool call runs at
most once per tree; a run again gives back the saved result, or says the call may have run."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.types import Command

from bot.runtime.attached_tools import (
    GUARD,
    GuardedTools,
    Outcome,
    ToolRunGuard,
    UnguardableToolNode,
    guard_tool_node,
    run_guarded,
)
from bot.store.memory import MemoryStore
from bot.store.records import NewToolRun
from bot.testing import FakeClock

CALL_ID = "call-0"


class Tool:
    """A tool's execution as the ToolNode hands it to the guard: counts its runs."""

    def __init__(self, outcome: Outcome | Exception) -> None:
        self.runs = 0
        self.outcome = outcome

    async def __call__(self, request: ToolCallRequest) -> Outcome:
        self.runs += 1
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def guard(store: MemoryStore) -> ToolRunGuard:
    return ToolRunGuard(
        tool_runs=store.tool_runs,
        clock=FakeClock(),
        tenant_id="acme",
        root_execution_id="root-1",
        thread_id="t1",
    )


def request(configurable: dict[str, Any]) -> ToolCallRequest:
    runtime = cast(ToolRuntime, SimpleNamespace(config={"configurable": configurable}))
    call = {"name": "refund", "args": {"order_id": "7"}, "id": CALL_ID, "type": "tool_call"}
    return ToolCallRequest(tool_call=call, tool=None, state={}, runtime=runtime)  # type: ignore[arg-type]


def guarded(store: MemoryStore) -> ToolCallRequest:
    return request({GUARD: guard(store), "checkpoint_ns": "tools:1"})


def refunded() -> ToolMessage:
    return ToolMessage(content="refunded 40", tool_call_id=CALL_ID, name="refund")


async def test_a_run_again_gives_back_the_saved_result_without_running() -> None:
    store, tool = MemoryStore(), Tool(refunded())
    first = await run_guarded(tool, guarded(store))
    again = await run_guarded(tool, guarded(store))
    assert tool.runs == 1
    assert isinstance(again, ToolMessage) and isinstance(first, ToolMessage)
    assert (again.content, again.tool_call_id, again.name) == ("refunded 40", CALL_ID, "refund")


async def test_a_run_that_started_and_saved_nothing_is_not_run_again() -> None:
    store, tool = MemoryStore(), Tool(refunded())
    key = guard(store).run_key("tools:1", CALL_ID)
    await store.tool_runs.start(
        NewToolRun(
            run_key=key,
            tenant_id="acme",
            root_execution_id="root-1",
            tool="refund",
            at=FakeClock().now(),
        )
    )  # the process that started it died
    told = await run_guarded(tool, guarded(store))
    assert tool.runs == 0
    assert isinstance(told, ToolMessage) and told.status == "error"
    assert "may or may not have run" in str(told.content)
    assert "was not run again" in str(told.content)


async def test_a_call_that_raised_may_be_run_again() -> None:
    store, tool = MemoryStore(), Tool(ValueError("card declined"))
    for _ in range(2):
        with pytest.raises(ValueError, match="card declined"):
            await run_guarded(tool, guarded(store))
    assert tool.runs == 2


async def test_a_graph_run_outside_countersign_runs_its_tools_as_before() -> None:
    tool = Tool(refunded())
    await run_guarded(tool, request({"checkpoint_ns": "tools:1"}))
    await run_guarded(tool, request({"checkpoint_ns": "tools:1"}))
    assert tool.runs == 2


async def test_a_command_result_is_not_run_again_either() -> None:
    store, tool = MemoryStore(), Tool(Command(update={"done": True}))
    await run_guarded(tool, guarded(store))
    again = await run_guarded(tool, guarded(store))
    assert tool.runs == 1
    assert isinstance(again, ToolMessage) and "was not run again" in str(again.content)


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


def test_a_tool_node_is_guarded_once_inside_its_own_wrapper() -> None:
    async def middleware(request: ToolCallRequest, execute: Any) -> Outcome:
        result: Outcome = await execute(request)
        return result

    node = ToolNode([refund], awrap_tool_call=middleware)
    guard_tool_node(node)
    guard_tool_node(node)  # attached again
    wrapper = node._awrap_tool_call
    assert isinstance(wrapper, GuardedTools) and wrapper.inner is middleware


def test_a_tool_node_with_a_synchronous_wrapper_only_cannot_be_guarded() -> None:
    node = ToolNode([refund], wrap_tool_call=lambda request, execute: execute(request))
    with pytest.raises(UnguardableToolNode, match="awrap_tool_call"):
        guard_tool_node(node)
