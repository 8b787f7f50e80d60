"""``App.answer``: one call answers a pause, reads it once, and says what became of the answer
as a closed union carrying the pause as it now is. Nothing but ``Answered`` changes the pause."""

from __future__ import annotations

from typing import Any, assert_never

import pytest

from bot import (
    AlreadyClosed,
    Answered,
    AnswerOutcome,
    ApprovalCounted,
    ExecutionStatus,
    NotUnderstood,
    PauseStatus,
    PauseView,
    Refused,
    ReplyKept,
    ToolCallApprovalDecision,
)
from bot.store.sql import SqlStore
from tests.conftest import MakeOffice, Office
from tests.runtime.helpers import EXPENSE, REFUND, run, script_refund, script_refund_and_expense


async def refund_pause(office: Office) -> str:
    await run(office)
    return office.inbox.last("refund-card-tool").pause_id


async def still_waits(office: Office, pause_id: str) -> bool:
    pause = await office.app.find_pause(pause_id, tenant_id="acme")
    return pause is not None and pause.status is PauseStatus.PENDING


def said(outcome: AnswerOutcome) -> str:
    """Every case, matched exhaustively (the union is closed)."""
    match outcome:
        case Answered():
            return "answered"
        case ApprovalCounted():
            return "counted"
        case ReplyKept():
            return "kept"
        case NotUnderstood():
            return "not understood"
        case AlreadyClosed():
            return "closed"
        case Refused():
            return "refused"
        case _:
            assert_never(outcome)


async def test_an_answer_is_recorded_and_continued_with_the_pause_as_it_now_is(
    make_office: MakeOffice,
) -> None:
    script_refund()
    office = await make_office()
    pause_id = await refund_pause(office)

    outcome = await office.app.answer(
        pause_id, tenant_id="acme", by="manager", decision={"approved": True}
    )

    assert isinstance(outcome, Answered)
    assert outcome.pause.status is PauseStatus.RESOLVED
    assert outcome.pause.responder == "manager"
    assert outcome.pause.decision == ToolCallApprovalDecision(approved=True)
    assert outcome.result is not None and outcome.result.status is ExecutionStatus.COMPLETED
    assert office.ledger.runs == [("refund", REFUND)]


async def test_record_only_then_continue_later(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    pause_id = await refund_pause(office)

    outcome = await office.app.answer(
        pause_id, tenant_id="acme", by="manager", decision={"approved": True}, continue_run=False
    )

    assert isinstance(outcome, Answered) and outcome.result is None
    assert office.ledger.runs == []  # recorded, not run yet
    result = await office.app.continue_answer(outcome)
    assert result.status is ExecutionStatus.COMPLETED
    assert office.ledger.runs == [("refund", REFUND)]


async def test_the_thread_owner_answers_a_thread_owner_pause_as_by(
    make_office: MakeOffice,
) -> None:
    script_refund_and_expense()
    office = await make_office()
    await run(office, owner_id="U1")
    pause_id = office.inbox.last("book-expense-tool").pause_id

    stranger = await office.app.answer(
        pause_id, tenant_id="acme", by="U2", decision={"approved": True}
    )
    assert isinstance(stranger, Refused) and stranger.code == "pause.not-thread-owner"
    assert stranger.pause is not None and stranger.pause.status is PauseStatus.PENDING
    assert await still_waits(office, pause_id)

    owner = await office.app.answer(
        pause_id, tenant_id="acme", by="U1", decision={"approved": True}, continue_run=False
    )
    assert isinstance(owner, Answered) and owner.answered_by == "U1"


async def test_an_unknown_pause_is_refused_without_a_pause(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    await refund_pause(office)

    outcome = await office.app.answer(
        "0" * 32, tenant_id="acme", by="manager", decision={"approved": True}
    )

    assert isinstance(outcome, Refused)
    assert outcome.pause is None and outcome.code == "pause.unknown"


@pytest.mark.parametrize(
    ("by", "decision", "reply", "code"),
    [
        ("", {"approved": True}, None, "pause.wrong-answerer"),
        ("manager", None, None, "dto.invalid"),
        ("manager", {"approved": True}, "yes", "dto.invalid"),
        ("manager", {"approved": True, "override_arguments": {"nope": 1}}, None, "dto.invalid"),
        ("manager", {"approved": "perhaps"}, None, "dto.invalid"),
    ],
)
async def test_a_bad_answer_is_refused_and_the_pause_keeps_waiting(
    make_office: MakeOffice, by: str, decision: Any, reply: str | None, code: str
) -> None:
    script_refund()
    office = await make_office()
    pause_id = await refund_pause(office)

    outcome = await office.app.answer(
        pause_id, tenant_id="acme", by=by, decision=decision, reply=reply
    )

    assert isinstance(outcome, Refused), outcome
    assert outcome.code == code
    assert await still_waits(office, pause_id)
    assert office.ledger.runs == []


async def test_the_channels_own_rule_refuses_in_its_own_words(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    pause_id = await refund_pause(office)
    asked: list[PauseView] = []

    async def only_approvers(pause: PauseView) -> str | None:
        asked.append(pause)
        return "only finance approves refunds"

    outcome = await office.app.answer(
        pause_id,
        tenant_id="acme",
        by="intern",
        decision={"approved": True},
        may_answer=only_approvers,
    )

    assert isinstance(outcome, Refused) and outcome.code == "pause.wrong-answerer"
    assert outcome.error.message == "only finance approves refunds"
    assert [p.status for p in asked] == [PauseStatus.PENDING]
    assert await still_waits(office, pause_id)


async def test_a_second_answer_finds_it_closed_and_who_answered(
    make_office: MakeOffice,
) -> None:
    script_refund()
    office = await make_office()
    pause_id = await refund_pause(office)
    await office.app.answer(pause_id, tenant_id="acme", by="first", decision={"approved": True})

    outcome = await office.app.answer(
        pause_id, tenant_id="acme", by="second", decision={"approved": False}
    )

    assert isinstance(outcome, AlreadyClosed)
    assert outcome.error.code == "run.not-paused"
    assert outcome.pause.responder == "first"
    assert outcome.pause.decision == ToolCallApprovalDecision(approved=True)
    assert office.ledger.runs == [("refund", REFUND)]


async def test_a_reply_that_says_no_answer_is_not_understood(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    pause_id = await refund_pause(office)

    outcome = await office.app.answer(pause_id, tenant_id="acme", by="manager", reply="maybe?")

    assert isinstance(outcome, NotUnderstood)
    assert outcome.reason == "say yes or no" and outcome.reply == "maybe?"
    assert outcome.error.code == "pause.uninterpretable-reply"
    assert await still_waits(office, pause_id)


async def test_a_reply_is_read_and_answers(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    pause_id = await refund_pause(office)

    outcome = await office.app.answer(
        pause_id, tenant_id="acme", by="manager", reply="ok, but only half"
    )

    assert isinstance(outcome, Answered)
    assert outcome.pause.reply == "ok, but only half"
    assert office.ledger.runs == [("refund", {**REFUND, "amount": 15.0})]


async def test_keep_model_replies_keeps_nothing_a_code_interpreter_reads(
    make_office: MakeOffice,
) -> None:
    """Only a model's reading may outlast a webhook's ack: a code interpreter reads at once."""
    script_refund()
    office = await make_office()
    pause_id = await refund_pause(office)

    outcome = await office.app.answer(
        pause_id, tenant_id="acme", by="manager", reply="yes", keep_model_replies=True
    )

    assert said(outcome) == "answered"


async def test_an_answer_reads_its_pause_once(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    script_refund()
    office = await make_office()
    pause_id = await refund_pause(office)
    finds: list[str] = []
    find = SqlStore.find

    async def counted(self: SqlStore, tenant_id: str, pause_id: str) -> Any:
        finds.append(tenant_id)
        return await find(self, tenant_id, pause_id)

    monkeypatch.setattr(SqlStore, "find", counted)
    outcome = await office.app.answer(
        pause_id, tenant_id="acme", by="manager", decision={"approved": True}
    )

    assert said(outcome) == "answered"
    assert finds == ["acme"]


async def test_the_resume_event_carries_the_answers_its_move_took(
    make_office: MakeOffice,
) -> None:
    script_refund_and_expense()
    office = await make_office()
    await run(office, owner_id="U1")
    events: list[Any] = []
    office.app.on_execution_resume(events.append)
    refund = office.inbox.last("refund-card-tool").pause_id
    expense = office.inbox.last("book-expense-tool").pause_id

    await office.app.answer(refund, tenant_id="acme", by="m", decision={"approved": True})
    await office.app.answer(expense, tenant_id="acme", by="U1", decision={"approved": False})

    assert [[p.ask.tool for p in e.answered] for e in events] == [
        ["refund-card-tool"],
        ["book-expense-tool"],
    ]
    assert events[0].answered[0].responder == "m"
    assert events[0].result.status is ExecutionStatus.PAUSED
    assert events[1].result.status is ExecutionStatus.COMPLETED
    assert office.ledger.runs == [("refund", REFUND)]
    assert EXPENSE not in [args for _, args in office.ledger.runs]
