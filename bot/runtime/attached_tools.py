"""An attached graph's tools run at most once, across a crash too (``cs_tool_runs``).

LangGraph runs a task again when its pass was cut off: a process killed while an approved refund
ran would refund twice when recovery resumes the graph. So each tool the graph's ``ToolNode`` runs
for Countersign is guarded as our own approved tools are (``bot.runtime.run_once``): its start is
recorded (keyed by the tree, the graph's thread, the task's checkpoint namespace and the tool call
id) before it runs, its result (sealed like every payload) after; a run again finds the result
and gives it back, or finds only the start and tells the model the call may have run.

Every tool of the graph's tool nodes is guarded, not only those a question was asked for: an
approval middleware's batched request does not carry the tool call's id, so which call was
approved cannot be told at the tool, and an unasked tool's side effect is not less doubled by a
crash. A call that raises, or pauses (an ``interrupt()`` inside the tool), forgets its start: it
may be retried, as without the guard.

The hook is the ``ToolNode``'s async tool-call wrapper (``awrap_tool_call``, kept by the node as
``_awrap_tool_call`` from langgraph-prebuilt 1.1.0 on): ours is composed *inside* the one
``create_agent`` gives it, around the tool's own execution, so LangChain's middleware — the
per-call approval's ``interrupt()``, an edit, a retry — runs around it as before. It guards only
runs Countersign makes (the guard rides in the run's config); the graph invoked by itself runs
its tools as before.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, assert_never

from langchain_core.messages import ToolMessage, message_to_dict, messages_from_dict
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from pydantic_core import to_jsonable_python

from bot.core.clock import Clock
from bot.runtime.run_once import GiveBack, MayHaveRun, RunNow, earlier_run, may_have_run
from bot.runtime.saved_results import save_result
from bot.runtime.tool_calls import tool_error
from bot.store.records import NewToolRun
from bot.store.repositories import ToolRuns

GUARD = "countersign_tool_runs"
"""The key of the run's ``configurable`` that carries the ``ToolRunGuard``."""

Outcome = ToolMessage | Command[Any]
Execute = Callable[[ToolCallRequest], Awaitable[Outcome]]
AsyncWrapper = Callable[[ToolCallRequest, Execute], Awaitable[Outcome]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolRunGuard:
    """Where the tools of one pass run: the tree and the graph's thread."""

    tool_runs: ToolRuns
    clock: Clock
    tenant_id: str
    root_execution_id: str
    thread_id: str

    def run_key(self, checkpoint_ns: str, call_id: str) -> str:
        return f"{self.root_execution_id}|{self.thread_id}|{checkpoint_ns}|{call_id}"


class UnguardableToolNode(Exception):
    """A tool node whose tools Countersign cannot guard (see ``guard_tool_node``)."""


class GuardedTools:
    """A ``ToolNode``'s async wrapper: the node's own (if any) around our guarded execution."""

    def __init__(self, inner: AsyncWrapper | None) -> None:
        self.inner = inner

    async def __call__(self, request: ToolCallRequest, execute: Execute) -> Outcome:
        guarded = functools.partial(run_guarded, execute)
        if self.inner is None:
            return await guarded(request)
        return await self.inner(request, guarded)


def guard_tool_node(node: ToolNode) -> None:
    """Compose our guard into ``node`` (once: attaching the graph again changes nothing).

    Raises ``UnguardableToolNode`` for a node with a synchronous wrapper only (Countersign runs
    the graph with ``ainvoke``, where the node would call that wrapper around a synchronous
    execution no guard can reach), or a ToolNode without the wrapper hook (not in 1.1.x).
    """
    if not hasattr(node, "_awrap_tool_call") or not hasattr(node, "_wrap_tool_call"):
        raise UnguardableToolNode("this langgraph-prebuilt's ToolNode has no awrap_tool_call")
    inner = node._awrap_tool_call
    if isinstance(inner, GuardedTools):
        return
    if inner is None and node._wrap_tool_call is not None:
        raise UnguardableToolNode(
            "its ToolNode has a wrap_tool_call without an awrap_tool_call: give it both"
        )
    node._awrap_tool_call = GuardedTools(inner)


async def run_guarded(execute: Execute, request: ToolCallRequest) -> Outcome:
    """Run the tool call at most once for its tree (see the module)."""
    config = getattr(request.runtime, "config", None) or {}
    configurable = config.get("configurable") or {}
    guard = configurable.get(GUARD)
    call = request.tool_call
    if not isinstance(guard, ToolRunGuard) or not call.get("id"):
        return await execute(request)  # not run by Countersign, or no id to key it by
    key = guard.run_key(str(configurable.get("checkpoint_ns", "")), str(call["id"]))
    run = await guard.tool_runs.start(
        NewToolRun(
            run_key=key,
            tenant_id=guard.tenant_id,
            root_execution_id=guard.root_execution_id,
            tool=call["name"],
            at=guard.clock.now(),
        )
    )
    earlier = earlier_run(first_start=run.first, saved=run.result)
    match earlier:
        case GiveBack(result=saved):
            return _given_back(saved, request)
        case MayHaveRun():
            return tool_error(call, call["name"], may_have_run(call["name"]))
        case RunNow():
            pass
        case _:
            assert_never(earlier)
    try:
        outcome = await execute(request)
    except (GraphBubbleUp, Exception):  # paused, or failed: a retry may run it (a cancel may not)
        await guard.tool_runs.forget(key)
        raise
    kept, at = _kept(outcome), guard.clock.now()
    await save_result(  # held through a database restart: never "may or may not have run"
        guard.clock, lambda: guard.tool_runs.finish(key, kept, at), tool=str(call["name"])
    )
    return outcome


def _kept(outcome: Outcome) -> dict[str, Any]:
    """What is saved of a run's outcome: its tool message (a ``Command``: only that it ran)."""
    if isinstance(outcome, ToolMessage):
        kept: dict[str, Any] = to_jsonable_python(message_to_dict(outcome), fallback=repr)
        return kept
    return {"command": True}


def _given_back(saved: dict[str, Any], request: ToolCallRequest) -> ToolMessage:
    call = request.tool_call
    if saved.get("command"):
        return ToolMessage(
            content=f"the call to {call['name']} ran; its result updated the graph and is not "
            "kept, and it was not run again",
            tool_call_id=call["id"] or "",
            name=call["name"],
        )
    [message] = messages_from_dict([saved])
    assert isinstance(message, ToolMessage)
    return message
