"""A tool's result rides on its pass's last write, never a write of its own (issue 32: four
writes per click): the rest when the tree pauses again, the end when it ends, failed too. On
a SQLite file and on PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.types import PregelTask, StateSnapshot

from bot import App, ExecutionStatus, WorkflowStartText
from bot.core.errors import AgentFailedError
from bot.runtime.engine import tool_results_in
from bot.testing import ScriptedChatModel, call_tool, inspect_app, mock_llm
from tests.conftest import MakeOffice
from tests.databases import BACKENDS, database
from tests.office import (
    BookExpenseTool,
    Inbox,
    OfficeAgent,
    OfficeWorkflow,
    RefundCardTool,
)
from tests.runtime.helpers import EXPENSE, REFUND, tool_messages


def watched(app: App) -> tuple[list[str], list[dict[str, str]]]:
    """The results saved by themselves, and those each last write (rest, end) carried."""
    store = inspect_app(app).store
    alone: list[str] = []
    carried: list[dict[str, str]] = []
    save, rest, end_tree = store.save_tool_result, store.rest, store.end_tree

    async def saved_alone(pause_id: str, result: str) -> None:
        alone.append(pause_id)
        await save(pause_id, result)

    async def resting(*args: Any, **kwargs: Any) -> Any:
        carried.append(dict(kwargs.get("results", {})))
        return await rest(*args, **kwargs)

    async def ending(*args: Any, **kwargs: Any) -> Any:
        carried.append(dict(kwargs.get("results", {})))
        return await end_tree(*args, **kwargs)

    store.save_tool_result = saved_alone  # type: ignore[method-assign]
    store.rest = resting  # type: ignore[method-assign]
    store.end_tree = ending  # type: ignore[method-assign]
    return alone, carried


async def approve_first(app: App, inbox: Inbox) -> tuple[str, Any]:
    """The office's run asked its first question; approved: its id and what resume returned."""
    paused = await app.execute(
        OfficeWorkflow, WorkflowStartText(text="please"), tenant_id="acme", owner_id="U1"
    )
    assert paused.status is ExecutionStatus.PAUSED
    pause_id = inbox.asks[0].pause_id
    done = await app.resume(
        pause_id, tenant_id="acme", decision={"approved": True}, answered_by="U0MANAGER"
    )
    return pause_id, done


async def result_of(app: App, pause_id: str) -> str | None:
    record = await inspect_app(app).store.find("acme", pause_id)
    assert record is not None
    return record.tool_result


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_result_rides_on_the_rest_when_the_tree_asks_again(
    backend: str, tmp_path: Path, make_office: MakeOffice
) -> None:
    model: ScriptedChatModel = mock_llm(OfficeAgent).then_return(
        call_tool(RefundCardTool, REFUND), call_tool(BookExpenseTool, EXPENSE), "done"
    )
    async with database(backend, tmp_path) as url:
        office = await make_office(database_url=url)
        async with office.app as app:  # closed before its database goes
            alone, carried = watched(app)
            pause_id, again = await approve_first(app, office.inbox)
            assert again.status is ExecutionStatus.PAUSED  # the expense's question waits
            [told] = tool_messages(model)
            assert carried == [{}, {pause_id: told}] and alone == []  # asked, asked again
            assert await result_of(app, pause_id) == told
            assert [name for name, _ in office.ledger.runs] == ["refund"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_result_rides_on_the_end_of_a_tree_that_failed_after_the_tool(
    backend: str, tmp_path: Path, make_office: MakeOffice
) -> None:
    model = mock_llm(OfficeAgent).then_return(
        call_tool(RefundCardTool, REFUND), RuntimeError("the model is away")
    )
    async with database(backend, tmp_path) as url:
        office = await make_office(database_url=url)
        async with office.app as app:  # closed before its database goes
            alone, carried = watched(app)
            with pytest.raises(AgentFailedError):
                await approve_first(app, office.inbox)
            [asked] = office.inbox.asks
            done = await app.get_result(asked.execution_id, tenant_id="acme")
            assert done.status is ExecutionStatus.FAILED
            [told] = tool_messages(model, 1)
            assert carried == [{}, {asked.pause_id: told}] and alone == []  # asked, then ended
            assert await result_of(app, asked.pause_id) == told
            assert [name for name, _ in office.ledger.runs] == ["refund"]


def _snapshot(values: dict[str, Any], *tasks: PregelTask) -> StateSnapshot:
    return StateSnapshot(values, (), {"configurable": {}}, None, None, None, tasks, ())


def test_recovery_reads_what_tools_returned_in_the_state_its_tasks_and_subgraphs() -> None:
    """What a pass cut off after its tools returned left in LangGraph's writes: its channels,
    the writes of tasks the step had not applied yet, and subgraphs' states; not errors."""
    said = ToolMessage(content="refunded 30", tool_call_id="c1")
    rejected = ToolMessage(content="the call was rejected", tool_call_id="c2", status="error")
    branch = ToolMessage(content="booked 12", tool_call_id="c3")
    child = ToolMessage(content="shipped 7", tool_call_id="c4")
    state = _snapshot(
        {"messages": [HumanMessage(content="please"), said, rejected], "input": "please"},
        PregelTask("t1", "tool", (), result={"messages": [branch]}),
        PregelTask("t2", "child", (), state=_snapshot({"messages": [child]})),
    )
    assert dict(tool_results_in(state)) == {
        "c1": "refunded 30",
        "c3": "booked 12",
        "c4": "shipped 7",
    }


async def test_a_pass_cancelled_before_its_last_write_saves_the_result_by_itself(
    tmp_path: Path, make_office: MakeOffice
) -> None:
    """Cancelled while its last write waits (a shutdown, say), the pass still saves the result
    it held (shielded), then lets the cancel through."""
    model = mock_llm(OfficeAgent).then_return(call_tool(RefundCardTool, REFUND), "done")
    office = await make_office(database_url=f"sqlite+aiosqlite:///{tmp_path / 'c.db'}")
    app = office.app
    store = inspect_app(app).store
    end_tree, ending = store.end_tree, asyncio.Event()

    async def stuck(*args: Any, **kwargs: Any) -> Any:
        ending.set()
        await asyncio.Event().wait()  # until cancelled
        return await end_tree(*args, **kwargs)

    store.end_tree = stuck  # type: ignore[method-assign]
    resuming = asyncio.ensure_future(approve_first(app, office.inbox))
    await ending.wait()
    resuming.cancel()
    with pytest.raises(asyncio.CancelledError):
        await resuming
    [asked] = office.inbox.asks
    [told] = tool_messages(model)
    assert await result_of(app, asked.pause_id) == told
    assert [name for name, _ in office.ledger.runs] == ["refund"]
