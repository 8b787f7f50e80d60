"""A tool's result whose save meets the database restarting is held and saved again (``bot.runtime
.saved_results``): the tool runs once and the model is told its real result, never that it "may
or may not have run" — on SQLite and PostgreSQL, for a native tool and an attached graph's tool.
An outage outlasting the bound still raises, to the existing recovery path."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from sqlalchemy.exc import IntegrityError, OperationalError

from bot import App, ExecutionStatus, WorkflowStartText
from bot.core.errors import RunInterruptedError
from bot.runtime.attached_tools import GUARD, run_guarded
from bot.runtime.saved_results import SAVE_BOUND, save_result
from bot.store.interruptions import is_interruption
from bot.store.memory import MemoryStore
from bot.testing import FakeClock, call_tool, inspect_app, mock_llm
from tests.conftest import NO_SETTINGS
from tests.databases import BACKENDS, database
from tests.langgraph.kit import tool_messages
from tests.office import (
    Inbox,
    Ledger,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    RefundCardTool,
)
from tests.runtime.test_attached_tools import Tool, guard, guarded, refunded, request

RESTARTING = 3
"""Saves that meet the database restarting before one goes through."""


def _restart() -> OperationalError:
    """What SQLAlchemy raises for a connection the server closed (a fast stop and start)."""
    return OperationalError(
        "UPDATE cs_pauses ...",
        {},
        ConnectionResetError("server closed the connection unexpectedly"),
        connection_invalidated=True,
    )


Save = Callable[..., Awaitable[Any]]


def _failing(save: Save, times: int, error: Callable[[], Exception]) -> tuple[Save, list[int]]:
    """``save``, failing its first ``times`` calls with ``error()``; the failures so far."""
    failed: list[int] = []

    async def flaky(*args: Any, **kwargs: Any) -> Any:
        if len(failed) < times:
            failed.append(1)
            raise error()
        return await save(*args, **kwargs)

    return flaky, failed


async def _while_the_clock_runs(clock: FakeClock, work: Awaitable[Any]) -> Any:
    """Await ``work``, moving the clock on a second at a time while it waits (its backoff)."""
    task = asyncio.ensure_future(work)
    while not task.done():
        await asyncio.sleep(0.01)
        if not task.done():
            await clock.advance(timedelta(seconds=1))
    return task.result()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_native_tools_result_is_saved_when_the_passs_last_write_meets_a_restart(
    backend: str, tmp_path: Path
) -> None:
    """The result rides on the pass's last write (here the run's end); that write meets the
    database restarting, so the result, held, is saved by itself through the restart. The run
    is left to recovery, which ends it: the tool ran once, the model read its real result."""
    clock, ledger, inbox = FakeClock(), Ledger(), Inbox()
    model = mock_llm(OfficeAgent).then_return(
        call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}), "refund done"
    )
    async with database(backend, tmp_path) as url:
        app = await App.create(
            OfficeApplication,
            database_url=url,
            clock=clock,
            settings=NO_SETTINGS,
            services={Inbox: inbox, Ledger: ledger},
        )
        async with app:
            paused = await app.execute(
                OfficeWorkflow, WorkflowStartText(text="refund"), tenant_id="acme", owner_id="U1"
            )
            assert paused.status is ExecutionStatus.PAUSED
            store = inspect_app(app).store
            end_tree, save_tool_result = store.end_tree, store.save_tool_result
            store.end_tree, ended = _failing(end_tree, 1, _restart)  # type: ignore[method-assign,assignment]
            store.save_tool_result, failed = _failing(  # type: ignore[method-assign,assignment]
                save_tool_result, RESTARTING, _restart
            )
            [asked] = inbox.asks
            with pytest.raises(Exception) as raised:
                await _while_the_clock_runs(
                    clock,
                    app.resume(
                        asked.pause_id,
                        tenant_id="acme",
                        decision={"approved": True},
                        answered_by="U0MANAGER",
                    ),
                )
            assert is_interruption(raised.value) or isinstance(raised.value, RunInterruptedError)
            assert len(ended) == 1 and len(failed) == RESTARTING
            [told] = tool_messages(model.calls[-1].messages)
            assert "may or may not have run" not in str(told.content) and told.status != "error"
            record = await store.find("acme", asked.pause_id)
            assert record is not None and record.tool_result == str(told.content)

            store.end_tree = end_tree  # type: ignore[method-assign]
            await clock.advance(timedelta(minutes=1))  # the pass's lease lapses: recovered
            await app.recover()  # (the sweep may have been first, as the clock moved)
            done = await store.get(paused.execution_id)
            assert done is not None and done.status is ExecutionStatus.COMPLETED
            assert [name for name, _ in ledger.runs] == ["refund"]  # once


async def test_an_attached_graphs_tool_result_is_saved_after_the_database_restarted() -> None:
    store, tool = MemoryStore(), Tool(refunded())
    store.tool_runs.finish, failed = _failing(  # type: ignore[method-assign,assignment]
        store.tool_runs.finish, RESTARTING, _restart
    )
    held = guard(store)
    assert isinstance(held.clock, FakeClock)
    first = await _while_the_clock_runs(
        held.clock, run_guarded(tool, request({GUARD: held, "checkpoint_ns": "tools:1"}))
    )
    again = await run_guarded(tool, guarded(store))  # a pass after it: given back, not run
    assert len(failed) == RESTARTING and tool.runs == 1
    assert isinstance(first, ToolMessage) and isinstance(again, ToolMessage)
    assert again.content == "refunded 40" and again.status != "error"


async def test_an_outage_outlasting_the_bound_is_raised_to_the_recovery_path() -> None:
    clock = FakeClock()
    started = clock.now()
    save, failed = _failing(_saved, 1000, _restart)
    with pytest.raises(OperationalError):
        await _while_the_clock_runs(clock, save_result(clock, save, tool="refund"))
    assert 3 < len(failed) < 20  # tried again with a backoff, not in a tight loop
    assert SAVE_BOUND - timedelta(seconds=5) <= clock.now() - started <= SAVE_BOUND


async def test_a_failure_that_is_not_the_databases_going_away_is_raised_at_once() -> None:
    clock = FakeClock()
    broken = lambda: IntegrityError("UPDATE", {}, ValueError("constraint"))  # noqa: E731
    save, failed = _failing(_saved, 1000, broken)
    with pytest.raises(IntegrityError):
        await save_result(clock, save, tool="refund")
    assert len(failed) == 1


async def _saved() -> None:
    """A save that goes through."""
