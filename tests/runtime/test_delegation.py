"""Handing questions on: ``App.reassign`` (one waiting question, to one more person) and
standing delegations (``App.delegate``, ending on the App's clock), applied in the one answer
path where the channel's rule refuses the person — never to answer their own request."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot import (
    Answered,
    ApprovalCounted,
    NotPausedError,
    PauseAnswererError,
    PauseView,
    Refused,
    SelfApprovalError,
    WorkflowStartText,
)
from tests.conftest import MakeOffice, Office
from tests.four_eyes import ANN, BOB, CID, REQUESTER, WireWorkflow
from tests.runtime.test_required_approvals import asked, script_wire

APPROVERS = {ANN, BOB, REQUESTER}  # the channel's rule: who may answer the wires
DAN = "U0DAN"
DAY = timedelta(days=1)


async def channel_rule(pause: PauseView, person: str) -> str | None:
    return None if person in APPROVERS else "You are not an approver of wires."


def rule_for(person: str):  # type: ignore[no-untyped-def]
    async def may_answer(pause: PauseView) -> str | None:
        return await channel_rule(pause, person)

    return may_answer


async def answer_as(office: Office, pause_id: str, person: str) -> object:
    return await office.app.answer(
        pause_id,
        tenant_id="acme",
        by=person,
        decision={"approved": True},
        may_answer=rule_for(person),
        may_answer_as=channel_rule,
    )


async def test_a_question_reassigned_may_be_answered_by_the_new_person_and_the_old(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    refused = await answer_as(office, pause_id, CID)
    assert isinstance(refused, Refused) and refused.code == "pause.wrong-answerer"

    view = await office.app.reassign(
        pause_id, tenant_id="acme", by=ANN, to=CID, may_answer=rule_for(ANN)
    )
    assert [(h.by, h.to, h.kind) for h in view.handovers] == [(ANN, CID, "reassigned")]
    again = await office.app.reassign(
        pause_id, tenant_id="acme", by=ANN, to=CID, may_answer=rule_for(ANN)
    )
    assert len(again.handovers) == 1  # handing it to the same person twice: once

    counted = await answer_as(office, pause_id, CID)
    assert isinstance(counted, ApprovalCounted)
    done = await answer_as(office, pause_id, ANN)  # the original may still answer
    assert isinstance(done, Answered) and done.result is not None
    record = await office.app.get_result(done.result.execution_id, tenant_id="acme", record=True)
    assert record.record is not None
    [entry] = record.record.pauses
    assert [(h.by, h.to) for h in entry.handovers] == [(ANN, CID)]
    assert sorted(a.by for a in entry.approvals) == [ANN, CID]


async def test_a_reassignment_is_refused_to_strangers_the_requester_and_closed_questions(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    with pytest.raises(PauseAnswererError):
        await office.app.reassign(
            pause_id, tenant_id="acme", by=DAN, to=CID, may_answer=rule_for(DAN)
        )
    with pytest.raises(SelfApprovalError):  # their own request: never
        await office.app.reassign(
            pause_id, tenant_id="acme", by=ANN, to=REQUESTER, may_answer=rule_for(ANN)
        )
    await answer_as(office, pause_id, ANN)
    await answer_as(office, pause_id, BOB)
    with pytest.raises(NotPausedError):
        await office.app.reassign(
            pause_id, tenant_id="acme", by=ANN, to=CID, may_answer=rule_for(ANN)
        )


async def test_a_standing_delegation_applies_to_waiting_questions_until_its_end(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    delegation = await office.app.delegate(
        tenant_id="acme", delegator=ANN, delegate=CID, ends_in=DAY
    )
    assert [d.delegation_id for d in await office.app.list_delegations(tenant_id="acme")] == [
        delegation.delegation_id
    ]
    counted = await answer_as(office, pause_id, CID)  # a question asked before: it applies
    assert isinstance(counted, ApprovalCounted)
    [handover] = counted.pause.handovers
    assert (handover.by, handover.to, handover.kind) == (ANN, CID, "delegation")
    assert handover.delegation_id == delegation.delegation_id

    await office.clock.advance(DAY)  # its end, on the App's clock
    script_wire()
    await office.app.execute(
        WireWorkflow, WorkflowStartText(text="again"), tenant_id="acme", owner_id=REQUESTER
    )
    later = office.inbox.asks[-1].pause_id  # a new question after the end
    refused = await answer_as(office, later, CID)
    assert isinstance(refused, Refused) and refused.code == "pause.wrong-answerer"
    assert await office.app.list_delegations(tenant_id="acme") == []
    assert len(await office.app.list_delegations(tenant_id="acme", include_ended=True)) == 1


async def test_a_delegation_ended_early_applies_no_more_and_never_to_ones_own_request(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    mine = await office.app.delegate(
        tenant_id="acme", delegator=REQUESTER, delegate=CID, ends_in=DAY
    )
    refused = await answer_as(office, pause_id, CID)  # in the requester's name: no
    assert isinstance(refused, Refused)
    to_requester = await office.app.delegate(
        tenant_id="acme", delegator=ANN, delegate=REQUESTER, ends_in=DAY
    )
    own = await answer_as(office, pause_id, REQUESTER)
    assert isinstance(own, Refused) and isinstance(own.error, SelfApprovalError)

    delegation = await office.app.delegate(
        tenant_id="acme", delegator=BOB, delegate=DAN, ends_in=DAY
    )
    assert await office.app.end_delegation(delegation.delegation_id, tenant_id="acme", by=BOB)
    assert not await office.app.end_delegation(delegation.delegation_id, tenant_id="acme", by=BOB)
    ended = await answer_as(office, pause_id, DAN)
    assert isinstance(ended, Refused)
    del mine, to_requester
