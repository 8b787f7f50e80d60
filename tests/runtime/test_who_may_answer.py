"""Spec: "Who may answer" — THREAD_OWNER and CHANNEL pauses, credentials, the pass's owner."""

from __future__ import annotations

import re
from typing import TypedDict

import pytest
from pydantic import BaseModel

from bot import (
    App,
    ExecutionStatus,
    PauseAnswerer,
    PauseAnswererError,
    PauseStatus,
    ThreadOwnerError,
    WorkflowFinishText,
    tool,
)
from bot.testing import TerminalOutput, TerminalUserChannel, call_tool, inspect_app, mock_llm
from tests.apps import sample_agent, sample_application
from tests.conftest import NO_SETTINGS, MakeOffice
from tests.runtime.helpers import run, script_refund, script_refund_and_expense


async def test_thread_owner_pause_lists_its_id_and_takes_the_owner(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    result = await run(office, owner_id="U1")
    owner_pause = next(p for p in result.pending if p.answered_by is PauseAnswerer.THREAD_OWNER)
    channel_pause = next(p for p in result.pending if p.answered_by is PauseAnswerer.CHANNEL)
    assert owner_pause.pause_id == office.inbox.last("book-expense-tool").pause_id
    assert re.fullmatch(r"[0-9a-f]{32}", owner_pause.pause_id or "")  # 128 random bits
    assert channel_pause.pause_id is None  # only its channel has it
    with pytest.raises(ThreadOwnerError):
        await office.app.resume(
            owner_pause.pause_id or "", decision={"approved": True}, tenant_id="acme", owner_id="U2"
        )
    with pytest.raises(PauseAnswererError):
        await office.app.resume(
            owner_pause.pause_id or "",
            decision={"approved": True},
            tenant_id="acme",
            answered_by="U1",
        )
    record = await inspect_app(office.app).store.find("acme", owner_pause.pause_id or "")
    assert record is not None and record.status is PauseStatus.PENDING


class Credentials(TypedDict, total=False):
    """Who answers: ``App.resume``'s ``owner_id`` / ``answered_by``, each one given or left out."""

    owner_id: str
    answered_by: str


@pytest.mark.parametrize(
    "credentials",
    [
        {"owner_id": "U1"},
        {},
        {"answered_by": ""},
        {"answered_by": "  "},
        {"answered_by": "m", "owner_id": "U1"},
    ],
)
async def test_channel_pause_needs_a_non_empty_answered_by(
    make_office: MakeOffice, credentials: Credentials
) -> None:
    script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    with pytest.raises(PauseAnswererError) as error:
        await office.app.resume(
            pause_id, decision={"approved": True}, tenant_id="acme", **credentials
        )
    assert error.value.code == "pause.wrong-answerer"
    record = await inspect_app(office.app).store.find("acme", pause_id)
    assert record is not None and record.status is PauseStatus.PENDING


async def test_the_resumed_pass_runs_as_the_thread_owner(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    await run(office, owner_id="customer-9")
    pause_id = office.inbox.last("refund-card-tool").pause_id
    await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="manager-17"
    )
    [context] = office.ledger.contexts
    assert context.owner_id == "customer-9"
    assert context.tenant.tenant_id == "acme"
    assert office.inbox.contexts[0].owner_id == "customer-9"


async def test_the_pause_id_is_made_once_and_a_rerun_step_never_sends_twice(
    make_office: MakeOffice,
) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    refund_id = office.inbox.last("refund-card-tool").pause_id
    expense = next(p for p in first.pending if p.pause_id)
    # answering the sibling re-runs the refund's step up to its interrupt(): same id, no new send
    await office.app.resume(
        expense.pause_id or "", decision={"approved": True}, tenant_id="acme", owner_id="U1"
    )
    assert [a.value.tool for a in office.inbox.asks] == ["refund-card-tool", "book-expense-tool"]
    assert office.inbox.last("refund-card-tool").pause_id == refund_id
    done = await office.app.resume(
        refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    assert done.status is ExecutionStatus.COMPLETED


class NoteInput(BaseModel):
    text: str


@tool(name="note-tool", description="Writes a note", input=NoteInput, channel=TerminalUserChannel)
class NoteTool:
    def run(self, input: NoteInput) -> str:
        return f"noted {input.text}"


NoteAgent = sample_agent(
    "note", tools=[NoteTool], description="Notes", prompt="Note it.", model="any"
)
NOTES = sample_application("notes", agent=NoteAgent, workflow_name="note-workflow", version="1")
NoteWorkflow = NOTES.workflow
NoteApplication = NOTES.application


async def test_a_concrete_channel_named_on_a_tool_is_answered_by_the_owner() -> None:
    import io

    mock_llm(NoteAgent).then_return(call_tool(NoteTool, {"text": "hi"}), "ok")
    stream = io.StringIO()
    async with await App.create(
        NoteApplication,
        database_url="sqlite+aiosqlite:///:memory:",
        settings=NO_SETTINGS,
        services={TerminalOutput: TerminalOutput(stream)},
    ) as app:
        result = await app.execute(NoteWorkflow, {"text": "note hi"}, tenant_id="t", owner_id="me")
        [pending] = result.pending
        assert pending.answered_by is PauseAnswerer.THREAD_OWNER
        assert pending.channel == "terminal-user-channel"
        assert stream.getvalue().startswith("? ")  # the terminal channel asked
        assert pending.pause_id is not None
        with pytest.raises(PauseAnswererError):
            await app.resume(
                pending.pause_id, decision={"approved": True}, tenant_id="t", answered_by="x"
            )
        done = await app.resume(
            pending.pause_id, decision={"approved": True}, tenant_id="t", owner_id="me"
        )
        assert done.status is ExecutionStatus.COMPLETED
        assert done.output == WorkflowFinishText(text="ok").model_dump()
