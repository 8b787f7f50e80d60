"""A channel that decides at once: the call never pauses, and an approval runs the tool once.

``AutoApproveChannel``, ``AutoRejectChannel`` and a ``mock_of`` scripted to decide are what
people test with; each is driven end to end here (what the tool ran with, how often, what the
model read, what the audit trail says), and a process killed inside the tool after the decision
never runs it again.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bot import (
    AgentFailedError,
    App,
    AutoApproveChannel,
    AutoRejectChannel,
    ChannelOutcome,
    DtoValidationError,
    ExecutionStatus,
    PauseResolution,
    ToolCallApprovalDecision,
    WorkflowStartText,
    agent,
    application,
    start,
    tool,
    workflow,
)
from bot.testing import FakeClock, call_tool, mock_llm, mock_of
from tests.apps import OfficeFinish, OfficeStart
from tests.conftest import NO_SETTINGS, MakeOffice
from tests.databases import BACKENDS, database
from tests.office import (
    Ledger,
    OfficeAgent,
    RecordingRefundChannel,
    RefundCardTool,
)
from tests.runtime.crash_worker import run_until_killed
from tests.runtime.helpers import REFUND, run, script_refund, tool_messages


class TransferInput(BaseModel):
    account: str
    amount: float


@tool(
    name="transfer-tool",
    description="Transfers money",
    input=TransferInput,
    channel=AutoApproveChannel,
    deps=[Ledger],
)
class TransferTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: TransferInput) -> str:
        self.ledger.runs.append(("transfer", input.model_dump()))
        return f"transferred {input.amount} to {input.account}"


@tool(
    name="delete-tool",
    description="Deletes an account",
    input=TransferInput,
    channel=AutoRejectChannel,
    deps=[Ledger],
)
class DeleteTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: TransferInput) -> str:
        self.ledger.runs.append(("delete", input.model_dump()))
        return "deleted"


@agent(
    name="bank-agent",
    description="Moves money",
    prompt="Do what is asked.",
    model="offline",
    tools=[TransferTool, DeleteTool],
)
class BankAgent: ...


@workflow(
    name="bank-workflow",
    version="1.0.0",
    flow=[
        start(OfficeStart).returns(WorkflowStartText).to_agent(BankAgent).to_finish(OfficeFinish)
    ],
)
class BankWorkflow: ...


@application(name="bank", workflows=[BankWorkflow])
class BankApplication: ...


ARGS = {"account": "DE-1", "amount": 20.0}


async def _bank(make_office: MakeOffice) -> tuple[App, Ledger]:
    office = await make_office(BankApplication)
    return office.app, office.ledger


async def _execute(app: App) -> Any:
    return await app.execute(
        BankWorkflow, WorkflowStartText(text="go"), tenant_id="acme", owner_id="U1", record=True
    )


async def test_auto_approve_runs_the_tool_once_with_its_arguments(
    make_office: MakeOffice,
) -> None:
    llm = mock_llm(BankAgent).then_return(call_tool(TransferTool, ARGS), "done")
    app, ledger = await _bank(make_office)
    result = await _execute(app)
    assert result.status is ExecutionStatus.COMPLETED
    assert ledger.runs == [("transfer", ARGS)]
    assert tool_messages(llm) == ["transferred 20.0 to DE-1"]
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.resolution is PauseResolution.DECIDED
    assert entry.responder is None
    assert entry.decision == {"approved": True, "reason": None, "override_arguments": None}
    assert entry.ran_with == ARGS


async def test_auto_reject_never_runs_the_tool_and_the_model_reads_why(
    make_office: MakeOffice,
) -> None:
    llm = mock_llm(BankAgent).then_return(call_tool(DeleteTool, ARGS), "ok")
    app, ledger = await _bank(make_office)
    result = await _execute(app)
    assert result.status is ExecutionStatus.COMPLETED
    assert ledger.runs == []
    assert tool_messages(llm) == [
        "Tool error: the call was rejected by auto-reject-channel: rejected automatically"
    ]
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.resolution is PauseResolution.DECIDED
    assert entry.ran_with is None


async def test_two_auto_approved_calls_in_one_turn_each_run_once(
    make_office: MakeOffice,
) -> None:
    other = {"account": "FR-2", "amount": 5.0}
    mock_llm(BankAgent).then_return(
        [call_tool(TransferTool, ARGS), call_tool(TransferTool, other)], "done"
    )
    app, ledger = await _bank(make_office)
    result = await _execute(app)
    assert result.status is ExecutionStatus.COMPLETED
    assert sorted(str(r[1]["account"]) for r in ledger.runs) == ["DE-1", "FR-2"]


async def test_a_mock_scripted_to_approve_runs_the_tool_once(make_office: MakeOffice) -> None:
    channel = mock_of(RecordingRefundChannel)
    channel.send.return_value = ChannelOutcome.decided({"approved": True})
    llm = script_refund()
    office = await make_office()
    result = await run(office)
    assert result.status is ExecutionStatus.COMPLETED
    assert channel.send.call_count == 1
    assert [name for name, _ in office.ledger.runs] == ["refund"]
    assert office.ledger.runs[0][1]["amount"] == REFUND["amount"]
    assert tool_messages(llm) == ['{"status":"refunded 30.0 on order 7"}']
    assert channel.withdraw.call_count == 0


async def test_a_mock_scripted_to_approve_with_changes_runs_them(
    make_office: MakeOffice,
) -> None:
    channel = mock_of(RecordingRefundChannel)
    channel.send.return_value = ChannelOutcome.decided(
        ToolCallApprovalDecision(approved=True, override_arguments={"amount": 12.5})
    )
    script_refund()
    office = await make_office()
    result = await run(office)
    assert result.status is ExecutionStatus.COMPLETED
    [(name, ran)] = office.ledger.runs
    assert (name, ran["amount"], ran["order_id"]) == ("refund", 12.5, "7")


async def test_a_mock_scripted_to_reject_never_runs_the_tool(make_office: MakeOffice) -> None:
    channel = mock_of(RecordingRefundChannel)
    channel.send.return_value = ChannelOutcome.decided({"approved": False, "reason": "no"})
    llm = script_refund()
    office = await make_office()
    result = await run(office)
    assert result.status is ExecutionStatus.COMPLETED
    assert office.ledger.runs == []
    assert tool_messages(llm) == [
        "Tool error: the call was rejected by recording-refund-approval-channel: no"
    ]


@pytest.mark.parametrize(
    "decision",
    [
        {"approved": False, "override_arguments": {"amount": 1}},
        {"approved": True, "override_arguments": {"amout": 1}},
        {"approved": True, "override_arguments": {"amount": "lots"}},
        {"approved": "perhaps"},
    ],
    ids=["overrides-with-a-rejection", "unknown-key", "invalid-value", "not-a-bool"],
)
async def test_an_invalid_decision_at_once_fails_the_step_as_resume_would(
    make_office: MakeOffice, decision: dict[str, Any]
) -> None:
    """The step fails with the same DtoValidationError app.resume gives, never a bare
    pydantic error, and the tool never runs."""
    refund = call_tool(RefundCardTool, REFUND)
    mock_llm(OfficeAgent).then_return(refund, refund)  # two executions, each asks once
    office = await make_office()
    office.inbox.decide = decision
    with pytest.raises(AgentFailedError) as failed:
        await run(office)
    cause = failed.value.__cause__
    assert isinstance(cause, DtoValidationError)
    assert cause.__context__ is None and cause.__cause__ is None
    assert office.ledger.runs == []

    office.inbox.decide = None
    paused = await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    with pytest.raises(DtoValidationError) as refused:
        await office.app.resume(pause_id, decision=decision, tenant_id="acme", answered_by="m")
    assert refused.value.message == cause.message
    assert paused.status is ExecutionStatus.PAUSED


async def test_a_decision_dto_that_fails_inside_send_is_a_dto_validation_error(
    make_office: MakeOffice,
) -> None:
    """A channel that builds an invalid ToolCallApprovalDecision in send: the pydantic error
    is reported as the decision's DtoValidationError, not as a channel that failed to send."""
    channel = mock_of(RecordingRefundChannel)

    async def send(_ask: Any) -> Any:
        return ChannelOutcome.decided(
            ToolCallApprovalDecision(approved=False, override_arguments={"amount": 1})
        )

    channel.send.side_effect = send
    script_refund()
    office = await make_office()
    with pytest.raises(AgentFailedError) as failed:
        await run(office)
    assert isinstance(failed.value.__cause__, DtoValidationError)
    assert "invalid decision" in str(failed.value)
    assert office.ledger.runs == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_process_killed_inside_a_tool_approved_at_once_never_runs_it_again(
    backend: str, tmp_path: Path
) -> None:
    async with database(backend, tmp_path) as url:
        out = run_until_killed(url, 1, "decided")
        assert "in the tool" in out
        [execution_id] = re.findall(r"in the tool \((\w+)\)", out)
        from tests.runtime.crash_worker import CrashApplication, Outbox
        from tests.runtime.crash_worker import Ledger as CrashLedger

        ledger = CrashLedger()
        clock = FakeClock()
        async with await App.create(
            CrashApplication,
            database_url=url,
            clock=clock,
            settings=NO_SETTINGS,
            services={CrashLedger: ledger, Outbox: Outbox(decide=True)},
        ) as survivor:
            await clock.advance(timedelta(seconds=61))
            await survivor.recover()
            done = await survivor.get_result(execution_id, tenant_id="acme", record=True)
            assert done.status is ExecutionStatus.COMPLETED
            assert done.record is not None
            [entry] = done.record.pauses
            assert entry.resolution is PauseResolution.DECIDED
        assert ledger.done == []  # the tool that may have run is never run again
