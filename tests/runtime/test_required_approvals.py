"""``@channel_role(..., required_approvals=2)``: a call runs once two distinct approvers (never
the requester) approved the same arguments, through the one answer path (``App.answer`` and
``App.resume``); one rejection rejects, an edit voids the approvals before it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bot import (
    AlreadyApprovedError,
    AlreadyClosed,
    Answered,
    App,
    ApprovalCounted,
    AssemblyError,
    ChannelOf,
    ExecutionStatus,
    NotPausedError,
    PauseAnswerer,
    PauseStatus,
    Refused,
    SelfApprovalError,
    WorkflowStartText,
    channel_role,
    tool,
)
from bot.testing import call_tool, mock_llm, test_with
from tests.apps import sample_agent, sample_application
from tests.conftest import NO_SETTINGS, MakeOffice, Office
from tests.databases import BACKENDS, database
from tests.four_eyes import (
    ANN,
    BOB,
    CID,
    REQUESTER,
    WIRE,
    WireAgent,
    WireApplication,
    WireTool,
    WireWorkflow,
)
from tests.office import Inbox, Ledger


def script_wire(then: str = "done") -> Any:
    return mock_llm(WireAgent).then_return(call_tool(WireTool, WIRE), then)


async def asked(make_office: MakeOffice, model: Any = None) -> tuple[Office, str]:
    if model is None:
        script_wire()
    office = await make_office(WireApplication)
    result = await office.app.execute(
        WireWorkflow, WorkflowStartText(text="wire it"), tenant_id="acme", owner_id=REQUESTER
    )
    assert result.status is ExecutionStatus.PAUSED
    return office, office.inbox.asks[-1].pause_id


async def approve(office: Office, pause_id: str, by: str, **decision: Any) -> Any:
    return await office.app.answer(
        pause_id, tenant_id="acme", by=by, decision={"approved": True, **decision}
    )


async def test_two_distinct_approvals_run_the_call_once_and_the_audit_lists_both(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)

    first = await approve(office, pause_id, ANN)
    assert isinstance(first, ApprovalCounted)
    assert first.still_needed == 1 and first.approval.by == ANN
    assert first.pause.status is PauseStatus.PENDING
    assert [a.by for a in first.pause.approvals] == [ANN] and first.pause.still_needed == 1
    assert office.ledger.runs == []

    second = await approve(office, pause_id, BOB)
    assert isinstance(second, Answered)
    assert second.result is not None and second.result.status is ExecutionStatus.COMPLETED
    assert office.ledger.runs == [("wire", WIRE)]
    record = await office.app.get_result(second.result.execution_id, tenant_id="acme", record=True)
    assert record.record is not None
    [entry] = record.record.pauses
    assert entry.responder == BOB
    assert entry.decision is not None and entry.decision["approved"] is True
    assert [(a.by, a.arguments, a.counted) for a in entry.approvals] == [
        (ANN, WIRE, True),
        (BOB, WIRE, True),
    ]

    late = await approve(office, pause_id, CID)  # a click after the second
    assert isinstance(late, AlreadyClosed) and isinstance(late.error, NotPausedError)
    assert office.ledger.runs == [("wire", WIRE)]


async def test_a_second_approval_by_the_same_person_is_refused_and_changes_nothing(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    assert isinstance(await approve(office, pause_id, ANN), ApprovalCounted)
    again = await approve(office, pause_id, ANN)
    assert isinstance(again, Refused) and isinstance(again.error, AlreadyApprovedError)
    assert again.code == "pause.already-approved"
    assert "another approver" in again.error.message or "more approver" in again.error.message
    pause = await office.app.find_pause(pause_id, tenant_id="acme")
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert [a.by for a in pause.approvals] == [ANN]
    assert office.ledger.runs == []


@pytest.mark.parametrize(
    "answer", [{"decision": {"approved": True}}, {"reply": "approve"}], ids=["decision", "reply"]
)
async def test_the_requester_never_counts(make_office: MakeOffice, answer: dict[str, Any]) -> None:
    office, pause_id = await asked(make_office)
    with pytest.raises(SelfApprovalError):
        await office.app.resume(pause_id, tenant_id="acme", answered_by=REQUESTER, **answer)
    pause = await office.app.find_pause(pause_id, tenant_id="acme")
    assert pause is not None and pause.status is PauseStatus.PENDING and pause.approvals == ()


async def test_a_rejection_after_one_approval_rejects_with_its_reason_for_the_model(
    make_office: MakeOffice,
) -> None:
    model = script_wire()
    office, pause_id = await asked(make_office, model)
    assert isinstance(await approve(office, pause_id, ANN), ApprovalCounted)
    result = await office.app.resume(
        pause_id,
        tenant_id="acme",
        answered_by=BOB,
        decision={"approved": False, "reason": "unknown account"},
        record=True,
    )
    assert result.status is ExecutionStatus.COMPLETED and office.ledger.runs == []
    told = [str(m.content) for m in model.calls[-1].messages]
    assert any("rejected by U0BOB: unknown account" in m for m in told)
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.responder == BOB and entry.decision is not None
    assert entry.decision["approved"] is False
    assert [a.by for a in entry.approvals] == [ANN]


async def test_an_edit_after_one_approval_voids_it_and_the_others_approve_the_new_proposal(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    assert isinstance(await approve(office, pause_id, ANN), ApprovalCounted)

    edited = await approve(office, pause_id, BOB, override_arguments={"amount": 20000.0})
    assert isinstance(edited, ApprovalCounted) and edited.still_needed == 1
    assert edited.approval.edited
    edited_wire = {**WIRE, "amount": 20000.0}
    assert edited.pause.proposal == edited_wire
    assert edited.pause.proposed_arguments == edited_wire
    assert [(a.by, a.counted) for a in edited.pause.approvals] == [(ANN, False), (BOB, True)]

    again = await approve(office, pause_id, BOB)  # the editor approved the new one already
    assert isinstance(again, Refused) and isinstance(again.error, AlreadyApprovedError)

    result = await office.app.resume(
        pause_id, tenant_id="acme", answered_by=ANN, decision={"approved": True}, record=True
    )
    assert office.ledger.runs == [("wire", edited_wire)]  # what the second approver was shown
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.ran_with == edited_wire
    assert [(a.by, a.arguments["amount"], a.edited, a.counted) for a in entry.approvals] == [
        (ANN, 25000.0, False, False),
        (BOB, 20000.0, True, True),
        (ANN, 20000.0, False, True),
    ]


async def test_resume_of_one_of_two_approvals_returns_the_run_as_it_waits(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    waiting = await office.app.resume(pause_id, tenant_id="acme", answered_by=ANN, reply="lgtm")
    assert waiting.status is ExecutionStatus.PAUSED and not waiting.moved
    assert len(waiting.pending) == 1 and office.ledger.runs == []
    done = await office.app.resume(
        pause_id, tenant_id="acme", answered_by=BOB, decision={"approved": True}
    )
    assert done.status is ExecutionStatus.COMPLETED and office.ledger.runs == [("wire", WIRE)]
    with pytest.raises(NotPausedError):
        await office.app.resume(
            pause_id, tenant_id="acme", answered_by=CID, decision={"approved": True}
        )


@pytest.mark.parametrize("kind", BACKENDS)
async def test_two_approvers_at_once_on_two_instances_are_both_counted_once(
    kind: str, tmp_path: Path
) -> None:
    script_wire()
    ledger = Ledger()
    async with (
        database(kind, tmp_path) as url,
        test_with(
            WireApplication,
            instances=2,
            database_url=url,
            settings=NO_SETTINGS,
            services={Inbox: Inbox(), Ledger: ledger},
        ) as (first, second),
    ):
        started = await first.execute(
            WireWorkflow, WorkflowStartText(text="wire"), tenant_id="acme", owner_id=REQUESTER
        )
        [pending] = started.pending
        assert pending.pause_id is None  # a CHANNEL pause: its id is the channel's
        pause_id = await _the_pause_id(first)
        outcomes = await asyncio.gather(
            first.answer(
                pause_id, tenant_id="acme", by=ANN, decision={"approved": True},
                continue_run=False,
            ),
            second.answer(
                pause_id, tenant_id="acme", by=BOB, decision={"approved": True},
                continue_run=False,
            ),
        )  # fmt: skip
        kinds = sorted(type(o).__name__ for o in outcomes)
        assert kinds == ["Answered", "ApprovalCounted"]
        [answered] = [o for o in outcomes if isinstance(o, Answered)]
        result = await second.continue_answer(answered, record=True)
        assert result.status is ExecutionStatus.COMPLETED
        assert ledger.runs == [("wire", WIRE)]
        assert result.record is not None
        [entry] = result.record.pauses
        assert sorted(a.by for a in entry.approvals) == [ANN, BOB]
        late = await first.answer(pause_id, tenant_id="acme", by=CID, decision={"approved": True})
        assert isinstance(late, AlreadyClosed)


async def _the_pause_id(app: App) -> str:
    [pending] = await app.list_pending(tenant_id="acme", include_channel_pause_ids=True)
    assert pending.pause_id is not None
    return pending.pause_id


class _Input(BaseModel):
    amount: float


@pytest.mark.parametrize(
    ("count", "answered_by", "grants"),
    [
        (0, PauseAnswerer.CHANNEL, ()),
        (11, PauseAnswerer.CHANNEL, ()),
        (True, PauseAnswerer.CHANNEL, ()),
        ("2", PauseAnswerer.CHANNEL, ()),
        (2, PauseAnswerer.THREAD_OWNER, ()),
        (2, PauseAnswerer.CHANNEL, ("thread",)),
    ],
    ids=["zero", "too-many", "bool", "text", "thread-owner", "with-grants"],
)
async def test_a_bad_required_approvals_is_an_assembly_error(
    count: Any, answered_by: PauseAnswerer, grants: tuple[str, ...]
) -> None:
    @channel_role(
        name="bad-approval-channel",
        description="d",
        approves=_Input,
        answered_by=answered_by,
        required_approvals=count,
        grants=grants,  # type: ignore[arg-type]
    )
    class BadApprovalChannel(ChannelOf): ...

    @tool(name="bad-tool", description="d", input=_Input, channel=BadApprovalChannel)
    class BadTool:
        def run(self, input: _Input) -> str:
            return "x"

    bad = sample_application(
        "bad-approvals",
        agent=sample_agent("bad", tools=[BadTool], description="d", model="offline"),
        version="1",
    )
    mock_llm(bad.agent)
    with pytest.raises(AssemblyError) as error:
        await App.create(bad.application, database_url="sqlite+aiosqlite:///:memory:")
    assert "channel-role.required-approvals" in error.value.rules


async def test_an_edit_of_an_edit_starts_from_the_standing_proposal(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    await approve(office, pause_id, ANN, override_arguments={"amount": 20000.0})
    again = await approve(office, pause_id, BOB, override_arguments={"account": "DE-2"})
    assert isinstance(again, ApprovalCounted)
    assert again.pause.proposal == {"account": "DE-2", "amount": 20000.0}  # both edits stand
    assert [(a.by, a.counted) for a in again.pause.approvals] == [(ANN, False), (BOB, True)]
    done = await approve(office, pause_id, ANN)
    assert isinstance(done, Answered)
    assert office.ledger.runs == [("wire", {"account": "DE-2", "amount": 20000.0})]


async def test_an_approval_of_a_proposal_replaced_since_it_was_shown_is_refused(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    shown = await office.app.find_pause(pause_id, tenant_id="acme")
    assert shown is not None and shown.shown_round == 0
    await approve(office, pause_id, BOB, override_arguments={"amount": 1.0})
    stale = await office.app.answer(
        pause_id, tenant_id="acme", by=ANN, decision={"approved": True}, shown_round=0
    )
    assert isinstance(stale, Refused) and stale.code == "pause.proposal-changed"
    fresh = await office.app.answer(
        pause_id, tenant_id="acme", by=ANN, decision={"approved": True}, shown_round=1
    )
    assert isinstance(fresh, Answered)
    assert office.ledger.runs == [("wire", {**WIRE, "amount": 1.0})]
