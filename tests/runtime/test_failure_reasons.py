"""Why a FAILED execution failed is kept with it and read back: ``ExecutionResult.error`` and
``ExecutionRecord.error`` (the error's code and message), for every way a run fails — an agent's
failure, a step's, an expiry a sweep closes with ``OnExpiry.FAIL``, an attached graph's — on
every way it is read: the failure ``execute`` / ``resume`` raise, the resume event's result,
``get_result`` on another App after a restart, the record (a failed child's too)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import tool as langchain_tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from bot import (
    AgentFailedError,
    App,
    CountersignError,
    ExecutionFailure,
    ExecutionResult,
    ExecutionResumeEvent,
    ExecutionStatus,
    OnExpiry,
    PauseExpiredError,
    PauseTiming,
    StepFailedError,
    WorkflowStartText,
    agent,
    application,
    start,
    workflow,
    workflow_finish,
)
from bot.security import parse_key_ring, reencrypt_database
from bot.testing import FakeClock, ScriptedChatModel, call_tool, inspect_app, mock_llm
from tests.apps import OfficeStart
from tests.conftest import NO_SETTINGS
from tests.langgraph.kit import OFFICE, Outbox, RefundApproval, tool_calls
from tests.office import (
    ASKED,
    Inbox,
    Ledger,
    OfficeAgent,
    OfficeApplication,
    OfficeWorkflow,
    RecordingRefundChannel,
    RefundCardTool,
)
from tests.parallel_app import ChildrenFailFastWorkflow, ParallelApplication
from tests.runtime.test_expiry import open_desk, payout_application, payout_call
from tests.security.office_run import KEY_A, KEY_B, open_office, raw_values

CARD = "4111-1111-CARD-PLAINTEXT"
"""What a failing call's message quotes: sealed at rest like every payload."""


def failure_of(error: CountersignError) -> ExecutionFailure:
    return ExecutionFailure(code=error.code, message=error.message)


@asynccontextmanager
async def office_on(
    url: str, application: type = OfficeApplication, inbox: Inbox | None = None
) -> AsyncIterator[App]:
    """An App of ``application`` on ``url``: one process's, closed at the end (a restart)."""
    async with await App.create(
        application,
        database_url=url,
        clock=FakeClock(),
        settings=NO_SETTINGS,
        services={Inbox: inbox or Inbox(), Ledger: Ledger()},
    ) as app:
        yield app


async def read_back(url: str, execution_id: str, application: type) -> ExecutionResult:
    """The execution as another App reads it after the first one stopped."""
    async with office_on(url, application) as other:
        return await other.get_result(execution_id, tenant_id="acme", record=True)


def resume_events(app: App) -> list[ExecutionResumeEvent]:
    events: list[ExecutionResumeEvent] = []
    app.on_execution_resume(events.append)
    return events


async def test_an_agents_failure_is_kept_sealed_and_read_back_after_a_restart(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    mock_llm(OfficeAgent).then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 4}))
    inbox = Inbox()
    inbox.fail_send = RuntimeError(f"the card {CARD} was refused")
    async with office_on(url, inbox=inbox) as app:
        with pytest.raises(AgentFailedError) as failed:
            await app.execute(
                OfficeWorkflow, WorkflowStartText(text="refund 7"), tenant_id="acme", owner_id="U1"
            )
    execution_id = failed.value.execution_id  # the root's: its one agent failed
    assert execution_id is not None

    result = await read_back(url, execution_id, OfficeApplication)

    assert result.status is ExecutionStatus.FAILED
    assert result.error == failure_of(failed.value)
    assert result.error.code == "agent.failed" and CARD in result.error.message
    assert result.record is not None and result.record.error == result.error
    assert not [value for value in await raw_values(url) if CARD.encode() in value]


async def test_reencrypt_reseals_the_failure_under_the_new_key(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    mock_llm(OfficeAgent).then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 4}))
    inbox = Inbox()
    inbox.fail_send = RuntimeError(f"the card {CARD} was refused")
    async with await open_office(url, KEY_A, inbox, Ledger()) as app:
        with pytest.raises(AgentFailedError) as failed:
            await app.execute(
                OfficeWorkflow, WorkflowStartText(text="refund 7"), tenant_id="acme", owner_id="U1"
            )

    await reencrypt_database(url, parse_key_ring(f"{KEY_B},{KEY_A}"))

    assert failed.value.execution_id is not None
    async with await open_office(url, KEY_B, Inbox(), Ledger()) as app:  # the old key is gone
        result = await app.get_result(failed.value.execution_id, tenant_id="acme")
    assert result.error == failure_of(failed.value)


class Refund(BaseModel):
    order_id: str
    amount: float


@workflow_finish(name="refund-workflow-finish", description="A refund done", output=Refund)
class RefundFinish: ...


@agent(
    name="strict-office-agent",
    description="Refunds; its answer must be a Refund",
    prompt="Refund.",
    model="moonshotai/kimi-k2.6",
    tools=[RefundCardTool],
)
class StrictOfficeAgent: ...


@workflow(
    name="strict-refund-workflow",
    version="1.0.0",
    flow=[start(OfficeStart).to_agent(StrictOfficeAgent).to_finish(RefundFinish)],
)
class StrictRefundWorkflow: ...


@application(
    name="strict-office", workflows=[StrictRefundWorkflow], channels=[RecordingRefundChannel]
)
class StrictOfficeApplication: ...


async def test_a_step_failing_after_an_answer_says_why_in_the_event_and_the_record(
    tmp_path: Path,
) -> None:
    """The finish step cannot read the agent's answer as a ``Refund``: the resume that moved
    the run raises ``StepFailedError``, its event's result says the same, so does the record."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    mock_llm(StrictOfficeAgent).then_return(
        call_tool(RefundCardTool, {"order_id": "7", "amount": 4}), "refunded, all good"
    )
    inbox = Inbox()
    async with await App.create(
        StrictOfficeApplication,
        database_url=url,
        clock=FakeClock(),
        settings=NO_SETTINGS,
        services={Inbox: inbox, Ledger: Ledger()},
    ) as app:
        events = resume_events(app)
        paused = await app.execute(
            StrictRefundWorkflow,
            WorkflowStartText(text="refund 7"),
            tenant_id="acme",
            owner_id="U1",
        )
        [ask] = inbox.asks
        with pytest.raises(StepFailedError) as failed:
            await app.resume(
                ask.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
            )

    assert type(failed.value) is StepFailedError
    [event] = events
    assert event.result is not None and event.result.status is ExecutionStatus.FAILED
    assert event.result.error == failure_of(failed.value)
    assert event.result.error.code == "step.failed"
    assert "not a valid Refund" in event.result.error.message
    result = await read_back(url, paused.execution_id, StrictOfficeApplication)
    assert result.error == event.result.error
    assert result.record is not None and result.record.error == result.error


async def test_an_expiry_a_sweep_closes_with_on_expiry_fail_says_why(tmp_path: Path) -> None:
    timing = PauseTiming(expire_after=timedelta(hours=1), on_expiry=OnExpiry.FAIL)
    sample = payout_application("failing-why", role_timing=timing)
    async with open_desk(sample, tmp_path) as desk:
        events = resume_events(desk.app)
        payout_call(desk)
        await desk.ask()
        await desk.clock.advance(timedelta(hours=2))  # the sweep closes it and fails the run

        execution_id = desk.sent.asks[-1].execution_id
        result = await desk.app.get_result(execution_id, tenant_id="t", record=True)
    expired_at = (desk.sent.asks[-1].expires_at or desk.clock.now()).isoformat()

    assert result.status is ExecutionStatus.FAILED
    assert result.error == ExecutionFailure(
        code=PauseExpiredError.code,
        message=f"nobody approved the call to failing-why-payout-tool in time (it expired at "
        f"{expired_at}); it did not run",
    )
    assert result.record is not None and result.record.error == result.error
    [event] = [e for e in events if e.by_sweep]
    assert event.result is not None and event.result.error == result.error


async def test_an_attached_graph_failing_says_why(tmp_path: Path) -> None:
    @langchain_tool("refund")
    def refund(order_id: str, amount: float, email: str = "") -> str:
        """Refund an order's card payment."""
        raise ValueError(f"the card {CARD} is blocked")

    model = ScriptedChatModel(component="refund").then_return(
        tool_calls(("refund", {"order_id": "7", "amount": 40})), "Done."
    )
    graph = create_agent(
        model,
        tools=[refund],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"refund": True})],
        checkpointer=InMemorySaver(),
    )
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    outbox = Outbox()
    async with await App.create(
        OFFICE.application, database_url=url, settings=NO_SETTINGS, services={Outbox: outbox}
    ) as app:
        attached = app.langgraph("refund-agent", graph, role=RefundApproval)
        paused = await attached.ainvoke(
            {"messages": [{"role": "user", "content": "refund 7"}]},
            thread_id="t1",
            tenant_id="acme",
            owner_id="U1",
        )
        [ask] = outbox.asks
        with pytest.raises(StepFailedError) as failed:
            await app.resume(
                ask.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M"
            )

    async with await App.create(
        OFFICE.application, database_url=url, settings=NO_SETTINGS, services={Outbox: Outbox()}
    ) as other:  # after a restart, the graph not attached again: the result is read all the same
        result = await other.get_result(paused.execution_id, tenant_id="acme", record=True)
    assert result.status is ExecutionStatus.FAILED
    assert result.error == failure_of(failed.value)
    assert result.error.code == "step.failed"
    assert result.error.message == f"the execution failed: ValueError: the card {CARD} is blocked"
    assert result.record is not None and result.record.error == result.error


async def test_a_failed_child_keeps_why_in_its_record(tmp_path: Path) -> None:
    """A FailFast launch of child workflows: the failing child's record says why it failed, and
    the root's says the same (the execution fails with the branch's error)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    ASKED.arm()  # the failing branch fails once its sibling asked
    try:
        async with office_on(url, ParallelApplication) as app:
            with pytest.raises(AgentFailedError) as failed:
                await app.execute(
                    ChildrenFailFastWorkflow,
                    WorkflowStartText(text="refund 5"),
                    tenant_id="acme",
                    owner_id="U1",
                    thread_id="children-1",
                )
            rows = await inspect_app(app).store.list_executions_by_thread("acme", "children-1")
    finally:
        ASKED.disarm()
    [root] = [row for row in rows if row.parent_execution_id is None]

    result = await read_back(url, root.execution_id, ParallelApplication)

    assert result.error == failure_of(failed.value)
    assert result.record is not None and result.record.error == result.error
    [child] = [c for c in result.record.children if c.status is ExecutionStatus.FAILED]
    assert child.workflow == "failing-child-workflow"
    assert child.error == result.error
    assert "PaymentDeclinedError: card declined for X" in child.error.message
    assert all(c.error is None for c in result.record.children if c is not child)
