"""Spec: "Who answered: result.record.pauses" — the permanent audit trail of the root."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest

from bot import (
    ExecutionStatus,
    NotPausedError,
    PauseAnswerer,
    PauseResolution,
    ToolCallApprovalDecision,
    UnknownPauseError,
)
from bot.core.sensitive import MASK
from bot.runtime.engine import Engine, PassReport
from bot.store.records import NewPause, PauseRecord
from bot.store.sql import SqlStore
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund_and_expense
from tests.runtime.reply_desk import open_desk, script_agent
from tests.runtime.test_pii import EMAIL_TOKEN, PHONE_TOKEN


async def test_record_lists_every_resolved_pause_in_order_asked(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    asked = office.clock.now()
    refund_id = office.inbox.last("refund-card-tool").pause_id
    expense_id = next(p.pause_id for p in first.pending if p.pause_id)
    assert expense_id is not None
    await office.clock.advance(timedelta(minutes=1))
    await office.app.resume(
        expense_id,
        decision={"approved": False, "reason": "no taxis"},
        tenant_id="acme",
        owner_id="U1",
    )
    await office.clock.advance(timedelta(minutes=1))
    result = await office.app.resume(
        refund_id,
        decision=ToolCallApprovalDecision(
            approved=True, override_arguments={"amount": 10.0, "email": "boss@example.com"}
        ),
        tenant_id="acme",
        answered_by="manager-17",
        record=True,
    )
    assert result.status is ExecutionStatus.COMPLETED
    assert result.record is not None
    refund, expense = result.record.pauses  # asked order, not answered order
    assert refund.pause_id is None  # a CHANNEL pause's id stays with its channel
    assert refund.answered_by is PauseAnswerer.CHANNEL
    assert refund.role == "refund-approval-channel"
    assert refund.responder == "manager-17"
    assert refund.resolution is PauseResolution.REPLIED
    assert refund.execution_id == result.execution_id
    assert refund.step.agent == "office-agent"
    assert refund.step.tool == "refund-card-tool"
    assert refund.step.tool_call_id
    assert refund.step.tool_loop_iteration == 1
    assert datetime.fromisoformat(refund.asked_at) == asked
    assert datetime.fromisoformat(refund.resolved_at) == asked + timedelta(minutes=2)
    assert refund.decision == {
        "approved": True,
        "reason": None,
        "override_arguments": {"order_id": "7", "amount": 10.0, "email": MASK},
    }
    assert expense.pause_id == expense_id  # a THREAD_OWNER pause's id is the owner's
    assert expense.responder == "U1"
    assert expense.decision == {"approved": False, "reason": "no taxis", "override_arguments": None}


async def test_cancelled_entries_have_no_responder_or_decision(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    await office.app.cancel(first.thread_id, tenant_id="acme")
    result = await office.app.get_result(first.execution_id, tenant_id="acme", record=True)
    assert result.status is ExecutionStatus.CANCELLED
    assert result.record is not None
    assert [e.resolution for e in result.record.pauses] == [PauseResolution.CANCELLED] * 2
    assert all(e.responder is None and e.decision is None for e in result.record.pauses)


async def test_each_pause_is_written_once(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    refund_id = office.inbox.last("refund-card-tool").pause_id
    await office.app.resume(
        refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    await office.app.cancel(first.thread_id, tenant_id="acme")
    result = await office.app.get_result(first.execution_id, tenant_id="acme", record=True)
    assert result.record is not None
    assert len(result.record.pauses) == 2
    assert sorted(e.resolution for e in result.record.pauses) == [
        PauseResolution.CANCELLED,
        PauseResolution.REPLIED,
    ]


# --------------------------------------------------------------------------------------------
# The order asked, masking by PII policies, what ran, and closing what no pass took


async def test_one_turns_pauses_are_listed_in_the_models_order_however_the_inserts_race(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refund is the model's first call; its record is made after the expense's here."""
    inserted: list[str] = []
    get_or_create = SqlStore.get_or_create

    async def late_refund(self: SqlStore, new: NewPause) -> PauseRecord:
        if new.ask.tool == "refund-card-tool":
            await asyncio.sleep(0.05)  # the expense's task inserts first
        inserted.append(new.ask.tool)
        return await get_or_create(self, new)

    monkeypatch.setattr(SqlStore, "get_or_create", late_refund)
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    assert inserted == ["book-expense-tool", "refund-card-tool"]
    assert [p.ask.tool for p in first.pending] == ["refund-card-tool", "book-expense-tool"]
    listed = await office.app.list_pending(tenant_id="acme")
    assert [p.ask.tool for p in listed] == ["book-expense-tool", "refund-card-tool"]  # newest
    expense_id = next(p.pause_id for p in first.pending if p.pause_id)
    assert expense_id is not None
    await office.app.cancel(first.thread_id, tenant_id="acme")
    done = await office.app.get_result(first.execution_id, tenant_id="acme", record=True)
    assert done.record is not None
    assert [e.step.tool for e in done.record.pauses] == ["refund-card-tool", "book-expense-tool"]


async def test_the_decision_and_what_ran_are_masked_by_the_application_and_workflow_policies() -> (
    None
):
    script_agent()
    async with open_desk(pii_policies=[EMAIL_TOKEN], workflow_pii_policies=[PHONE_TOKEN]) as desk:
        await desk.execute()
        pause_id = desk.desk.pause_of("refund-card-tool")
        result = await desk.app.resume(
            pause_id,
            decision={
                "approved": True,
                "reason": "jane.doe@example.com asked by phone, +1 415-555-0100",
                "override_arguments": {
                    "amount": 12.0,
                    "email": "boss@example.com",
                    "note": "call back on +1 415-555-0100 or jane@example.org",
                },
            },
            tenant_id="acme",
            answered_by="manager-17",
            record=True,
        )
        assert result.status is ExecutionStatus.COMPLETED
        [(_, ran)] = desk.runs.runs
        assert ran["email"] == "boss@example.com"  # the tool gets the real values
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.decision == {
        "approved": True,
        "reason": "<EMAIL> asked by phone, <PHONE>",
        "override_arguments": {
            "order_id": "7",
            "amount": 12.0,
            "email": MASK,
            "note": "call back on <PHONE> or <EMAIL>",
        },
    }
    assert entry.ran_with == entry.decision["override_arguments"]
    shown = repr(result.record)
    assert "jane" not in shown and "415-555" not in shown  # not "415": a hex id may hold it


async def test_a_rejection_ran_nothing_and_its_reason_is_masked() -> None:
    script_agent()
    async with open_desk(pii_policies=[EMAIL_TOKEN]) as desk:
        await desk.execute()
        result = await desk.app.resume(
            desk.desk.pause_of("refund-card-tool"),
            decision={"approved": False, "reason": "ask jane@example.com first"},
            tenant_id="acme",
            answered_by="manager-17",
            record=True,
        )
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.decision == {
        "approved": False,
        "reason": "ask <EMAIL> first",
        "override_arguments": None,
    }
    assert entry.ran_with is None


async def test_an_approval_says_what_the_tool_ran_with(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    expense_id = next(p.pause_id for p in first.pending if p.pause_id)
    assert expense_id is not None
    await office.app.resume(
        expense_id, decision={"approved": True}, tenant_id="acme", owner_id="U1"
    )
    result = await office.app.resume(
        office.inbox.last("refund-card-tool").pause_id,
        decision={"approved": True, "override_arguments": {"amount": 3.5}},
        tenant_id="acme",
        answered_by="manager-17",
        record=True,
    )
    assert result.record is not None
    refund, expense = result.record.pauses
    assert refund.ran_with == {"order_id": "7", "amount": 3.5, "email": MASK}
    assert expense.ran_with == {"purpose": "taxi", "amount": 12.0}


async def test_an_answer_no_pass_took_is_closed_when_its_tree_ends_and_falls_to_retention(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    refund_id = office.inbox.last("refund-card-tool").pause_id

    async def no_pass(self: Engine, root: str) -> PassReport:
        return PassReport(ran=False)  # the answer is recorded; no pass takes it

    monkeypatch.setattr(Engine, "continue_tree", no_pass)
    await office.app.resume(
        refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    monkeypatch.undo()
    await office.app.cancel(first.thread_id, tenant_id="acme")
    with pytest.raises(NotPausedError) as late:
        await office.app.resume(
            refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert "already answered by m" in str(late.value)
    await office.clock.advance(timedelta(hours=25))  # past the retention window
    with pytest.raises(UnknownPauseError):
        await office.app.resume(
            refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert office.ledger.runs == []
    done = await office.app.get_result(first.execution_id, tenant_id="acme", record=True)
    assert done.record is not None
    assert [e.resolution for e in done.record.pauses] == [
        PauseResolution.REPLIED,
        PauseResolution.CANCELLED,
    ]
