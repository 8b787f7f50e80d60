"""One way to answer: ``App.answer`` and its closed union are the one answer path; ``resume``
(the spec's name) and ``read_kept`` take it too, and the old generation is gone. Names that
misled say what they are, the old ones kept working."""

from __future__ import annotations

from typing import Any, cast

import pytest

from bot import (
    AlreadyClosed,
    Answered,
    AnswerOutcome,
    App,
    PauseAnswerer,
    PauseAnswererError,
    PauseStatus,
    RecordedAnswer,
    Refused,
    ThreadOwnerError,
)
from bot.runtime import answers
from bot.runtime.answers import AnswerRequest
from bot.store import closings
from bot.testing import inspect_app
from channels.slack import observing
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund, script_refund_and_expense

APP_MEMBERS = [
    "answer",
    "answer_all",
    "assembly",
    "batch_lines",
    "cancel",
    "checkpointer",
    "clock",
    "close",
    "close_due",
    "continue_answer",
    "continue_answers",
    "create",
    "database",
    "delegate",
    "derived_keys",
    "end_delegation",
    "execute",
    "find_pause",
    "get_result",
    "grant",
    "installations",
    "langgraph",
    "list_answered",
    "list_delegations",
    "list_grants",
    "list_pending",
    "may_answer_as_delegate",
    "message_refs",
    "metrics",
    "oauth_states",
    "on_delegation",
    "on_execution_pause",
    "on_execution_resume",
    "outbox",
    "provide",
    "read_kept",
    "readiness",
    "reassign",
    "recover",
    "resume",
    "revoke_grant",
    "sql_engine",
    "sweep",
    "sweep_interval",
]
"""App's public members: one answer path (``answer``, its two phases ``continue_answer`` and
``read_kept``, the spec's ``resume``); ``record_answer``, ``receive_reply``, ``read_reply`` and
``read_unread`` are gone. Add a member here when you add one to App."""


def test_app_has_one_way_to_answer() -> None:
    assert sorted(name for name in vars(App) if not name.startswith("_")) == APP_MEMBERS


async def test_every_public_way_to_answer_takes_the_one_path(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    script_refund_and_expense()
    office = await make_office()
    await run(office, owner_id="U1")
    refund = office.inbox.last("refund-card-tool").pause_id
    expense = office.inbox.last("book-expense-tool").pause_id
    taken: list[tuple[str, PauseAnswerer | None]] = []
    path = answers.answer

    async def counted(*args: Any, **kwargs: Any) -> AnswerOutcome:
        request = args[2]
        assert isinstance(request, AnswerRequest)
        taken.append((request.by, request.answering_as))
        return await path(*args, **kwargs)

    monkeypatch.setattr("bot.app.answer", counted)  # the runtime's path, as App calls it

    with pytest.raises(ThreadOwnerError):
        await office.app.resume(
            expense, decision={"approved": True}, tenant_id="acme", owner_id="U2"
        )
    await office.app.resume(refund, reply="yes", tenant_id="acme", answered_by="manager-17")
    outcome = await office.app.answer(
        expense, tenant_id="acme", by="U1", decision={"approved": True}
    )

    assert isinstance(outcome, Answered)
    assert taken == [
        ("U2", PauseAnswerer.THREAD_OWNER),
        ("manager-17", PauseAnswerer.CHANNEL),
        ("U1", None),
    ]


async def test_a_resume_refusal_is_counted_as_an_answers_refusal(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id

    with pytest.raises(PauseAnswererError):
        await office.app.resume(pause_id, decision={"approved": True}, tenant_id="acme")
    await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )

    registry = office.app.metrics.registry
    counted = {
        outcome: registry.get_sample_value(
            "countersign_answers_total",
            {"outcome": outcome, "code": code},
        )
        for outcome, code in (("refused", "pause.wrong-answerer"), ("answered", ""))
    }
    assert counted == {"refused": 1, "answered": 1}


@pytest.mark.parametrize("credentials", [{"answered_by": 17}, {"owner_id": 17}])
async def test_a_credential_that_is_no_text_is_refused_and_the_pause_waits(
    make_office: MakeOffice, credentials: dict[str, object]
) -> None:
    """A webhook that passes a user's number, not a name, is told so (it crashed before)."""
    script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id

    with pytest.raises(PauseAnswererError) as refused:
        await office.app.resume(
            pause_id,
            decision={"approved": True},
            tenant_id="acme",
            **cast(dict[str, Any], credentials),
        )

    assert refused.value.code == "pause.wrong-answerer"
    record = await inspect_app(office.app).store.find("acme", pause_id)
    assert record is not None and record.status is PauseStatus.PENDING
    assert office.ledger.runs == []


async def test_a_pending_pause_names_its_role(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    paused = await run(office, owner_id="U1")
    [listed] = await office.app.list_pending(
        tenant_id="acme", answered_by=PauseAnswerer.THREAD_OWNER, owner_id="U1"
    )
    [waiting] = [p for p in paused.pending if p.answered_by is PauseAnswerer.THREAD_OWNER]
    assert listed.pause_id is not None
    shown = await office.app.find_pause(listed.pause_id, tenant_id="acme")

    assert listed.role == waiting.role == "expense-approval-channel"
    assert shown is not None and shown.role == listed.role
    assert shown.channel == "recording-expense-approval-channel"  # the role's implementation
    assert listed.channel == listed.role  # the old name, kept working
    assert "role='expense-approval-channel'" in repr(listed)


def test_the_old_names_keep_working() -> None:
    assert RecordedAnswer is Answered
    assert closings.Answered is closings.Replied
    assert closings.Replied.__name__ == "Replied"  # one class named Answered: bot's
    assert observing.outcome_of is observing.response_outcome
    assert observing.response_outcome(200) == "ok"


async def test_who_may_answer_is_checked_before_how_the_question_closed(
    make_office: MakeOffice,
) -> None:
    """On every path: the wrong person, or the wrong credential, is refused as such also once
    the question closed, and learns nothing of how it closed (nor who answered it)."""
    script_refund_and_expense()
    office = await make_office()
    await run(office, owner_id="U1")
    expense = office.inbox.last("book-expense-tool").pause_id
    await office.app.resume(expense, decision={"approved": True}, tenant_id="acme", owner_id="U1")

    with pytest.raises(ThreadOwnerError):
        await office.app.resume(
            expense, decision={"approved": False}, tenant_id="acme", owner_id="U2"
        )
    with pytest.raises(PauseAnswererError):
        await office.app.resume(
            expense, decision={"approved": False}, tenant_id="acme", answered_by="m"
        )
    stranger = await office.app.answer(
        expense, tenant_id="acme", by="U2", decision={"approved": False}
    )
    owner = await office.app.answer(
        expense, tenant_id="acme", by="U1", decision={"approved": False}
    )

    assert isinstance(stranger, Refused) and stranger.code == "pause.not-thread-owner"
    assert "U1" not in stranger.error.message
    assert isinstance(owner, AlreadyClosed) and owner.pause.responder == "U1"
