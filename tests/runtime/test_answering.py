"""Spec: "Answering a pause" — by id, the rest keep waiting, validation, approve / reject."""

from __future__ import annotations

import pytest

from bot import (
    AgentFailedError,
    DtoValidationError,
    ExecutionStatus,
    NotPausedError,
    PauseStatus,
    ToolCallApprovalDecision,
    UnknownPauseError,
)
from bot.testing import inspect_app
from tests.conftest import MakeOffice
from tests.runtime.helpers import (
    REFUND,
    run,
    script_refund,
    script_refund_and_expense,
    tool_messages,
)


async def test_answered_by_its_id_without_thread_id(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    paused = await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    result = await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="mgr"
    )
    assert result.status is ExecutionStatus.COMPLETED
    assert result.thread_id == paused.thread_id
    assert result.execution_id == paused.execution_id
    assert result.pending == []


async def test_unknown_and_foreign_ids_are_the_same_error(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    await run(office, tenant_id="acme")
    pause_id = office.inbox.last("refund-card-tool").pause_id
    with pytest.raises(UnknownPauseError) as foreign:
        await office.app.resume(
            pause_id, decision={"approved": True}, tenant_id="other", answered_by="m"
        )
    with pytest.raises(UnknownPauseError) as unknown:
        await office.app.resume(
            "0" * 32, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert str(foreign.value) == str(unknown.value)
    assert pause_id not in str(foreign.value)
    # the pause still waits for its own tenant
    done = await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    assert done.status is ExecutionStatus.COMPLETED


async def test_the_rest_keep_waiting_and_the_last_answer_finishes(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    assert first.status is ExecutionStatus.PAUSED and len(first.pending) == 2
    refund_id = office.inbox.last("refund-card-tool").pause_id
    partial = await office.app.resume(
        refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    assert partial.status is ExecutionStatus.PAUSED
    assert [p.ask.tool for p in partial.pending] == ["book-expense-tool"]
    expense_id = partial.pending[0].pause_id
    assert expense_id is not None
    last = await office.app.resume(
        expense_id, decision={"approved": True}, tenant_id="acme", owner_id="U1"
    )
    assert last.status is ExecutionStatus.COMPLETED
    assert last.output == {"text": "all done"}


async def test_approved_runs_the_tool_once_with_overrides(make_office: MakeOffice) -> None:
    llm = script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    await office.app.resume(
        pause_id,
        decision=ToolCallApprovalDecision(approved=True, override_arguments={"amount": 15.0}),
        tenant_id="acme",
        answered_by="mgr",
    )
    assert office.ledger.runs == [("refund", {**REFUND, "amount": 15.0})]
    assert tool_messages(llm) == ['{"status":"refunded 15.0 on order 7"}']


async def test_rejected_the_model_reads_who_and_why(make_office: MakeOffice) -> None:
    llm = script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    await office.app.resume(
        pause_id,
        decision={"approved": False, "reason": "too much"},
        tenant_id="acme",
        answered_by="mgr-17",
    )
    assert office.ledger.runs == []
    assert tool_messages(llm) == ["Tool error: the call was rejected by mgr-17: too much"]


async def test_rejected_without_reason(make_office: MakeOffice) -> None:
    llm = script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    await office.app.resume(
        pause_id, decision={"approved": False}, tenant_id="acme", answered_by="mgr-17"
    )
    assert tool_messages(llm) == ["Tool error: the call was rejected by mgr-17"]


@pytest.mark.parametrize(
    "decision",
    [
        {"approved": False, "override_arguments": {"amount": 1.0}},
        {"approved": True, "override_arguments": {"amount": "lots"}},
        {"approved": True, "override_arguments": {"amout": 20}},
        {"approved": True, "override_arguments": {"amount": 20, "tip": 5}},
        {"approved": "maybe"},
        {"approved": True, "extra": 1},
        {},
        "yes",
    ],
)
async def test_invalid_decision_is_refused_and_the_pause_keeps_waiting(
    make_office: MakeOffice, decision: object
) -> None:
    script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    with pytest.raises(DtoValidationError):
        await office.app.resume(pause_id, decision=decision, tenant_id="acme", answered_by="m")  # type: ignore[arg-type]
    [record] = await office.app.list_pending(tenant_id="acme")
    assert record.ask.tool == "refund-card-tool"
    assert office.ledger.runs == []
    done = await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    assert done.status is ExecutionStatus.COMPLETED
    assert office.ledger.runs[0][1]["amount"] == 30.0  # the original, nothing half-applied


async def test_a_second_answer_is_not_paused_and_moves_nothing(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="a"
    )
    with pytest.raises(NotPausedError) as error:
        await office.app.resume(
            pause_id, decision={"approved": False}, tenant_id="acme", answered_by="b"
        )
    assert "already answered by a" in str(error.value)
    assert len(office.ledger.runs) == 1


async def test_channel_decided_at_once_never_pauses(make_office: MakeOffice) -> None:
    llm = script_refund()
    office = await make_office()
    office.inbox.decide = {"approved": False, "reason": "policy"}
    result = await run(office)
    assert result.status is ExecutionStatus.COMPLETED
    assert tool_messages(llm) == [
        "Tool error: the call was rejected by recording-refund-approval-channel: policy"
    ]
    record = await office.app.get_result(result.execution_id, tenant_id="acme", record=True)
    assert record.record is not None
    [entry] = record.record.pauses
    assert entry.resolution == "DECIDED"
    assert entry.responder is None


async def test_channel_decided_with_an_invalid_decision_fails_the_step(
    make_office: MakeOffice,
) -> None:
    script_refund()
    office = await make_office()
    office.inbox.decide = {"approved": False, "override_arguments": {"amount": 1}}
    with pytest.raises(AgentFailedError) as error:
        await run(office)
    assert isinstance(error.value.__cause__, DtoValidationError)
    assert office.ledger.runs == []


async def test_a_send_that_raises_fails_the_step_with_the_cause(make_office: MakeOffice) -> None:
    """A channel's own error fails the step; a lost connection does not (it is an outage: the
    question is asked again by recovery, ``tests/slack/test_outages_questions.py``)."""
    llm = script_refund()
    office = await make_office()
    boom = LookupError("no conversation C0GONE")
    office.inbox.fail_send = boom
    with pytest.raises(AgentFailedError) as error:
        await run(office)
    assert error.value.__cause__ is boom
    assert error.value.agent == "office-agent"
    assert len(llm.calls) == 1  # the model never read it as a tool error
    rows = await inspect_app(office.app).store.list_pending("acme")
    assert rows == []  # the tree ended: nothing waits
    assert office.inbox.withdrawals == []  # never sent, never withdrawn


async def test_approved_pause_is_taken_and_status_moves(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    await run(office)
    ask = office.inbox.last("refund-card-tool")
    store = inspect_app(office.app).store
    before = await store.find("acme", ask.pause_id)
    assert before is not None and before.status is PauseStatus.PENDING and before.is_sent
    await office.app.resume(
        ask.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    after = await store.find("acme", ask.pause_id)
    assert after is not None and after.status is PauseStatus.TAKEN
    assert after.resolution == "REPLIED"
    assert after.resolved_at == office.clock.now()


async def test_an_edit_with_an_unknown_key_names_it_and_what_the_tool_takes(
    make_office: MakeOffice,
) -> None:
    script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    with pytest.raises(DtoValidationError) as error:
        await office.app.resume(
            pause_id,
            decision={"approved": True, "override_arguments": {"amout": 20}},
            tenant_id="acme",
            answered_by="m",
        )
    assert error.value.message == (
        "override_arguments: 'amout' is not a field of the tool's input "
        "(its fields: amount, email, order_id)"
    )
    assert error.value.__context__ is None  # the message says it all, no pydantic trace behind
