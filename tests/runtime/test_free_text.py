"""Spec: "Answering with free text" — code reply interpreters."""

from __future__ import annotations

import pytest

from bot import (
    DtoValidationError,
    ExecutionStatus,
    PauseStatus,
    ReplyInterpretation,
    ReplyInterpreterMissingError,
    UninterpretableReplyError,
    UnknownPauseError,
)
from bot.testing import inspect_app, mock_of
from tests.conftest import MakeOffice, Office
from tests.office import ExpenseReplyInterpreter, RefundReplyInterpreter
from tests.runtime.helpers import REFUND, run, script_refund, script_refund_and_expense


async def _refund_pause(make_office: MakeOffice) -> tuple[Office, str]:
    script_refund()
    office = await make_office()
    await run(office)
    return office, office.inbox.last("refund-card-tool").pause_id


async def _still_pending(office: Office, pause_id: str) -> None:
    record = await inspect_app(office.app).store.find("acme", pause_id)
    assert record is not None and record.status is PauseStatus.PENDING


@pytest.mark.parametrize(
    ("decision", "reply"),
    [({"approved": True}, "yes"), (None, ""), (None, "   "), (None, None)],
)
async def test_exactly_one_of_decision_or_reply_before_the_look_up(
    make_office: MakeOffice, decision: dict[str, bool] | None, reply: str | None
) -> None:
    office = await make_office()
    # an unknown id: the shape is checked first, so this is not UnknownPauseError
    with pytest.raises(DtoValidationError):
        await office.app.resume(
            "f" * 32,
            decision=decision,
            reply=reply,
            tenant_id="acme",
            answered_by="m",
        )


async def test_the_interpreter_reads_the_ask_and_its_answer_is_validated(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await _refund_pause(make_office)
    result = await office.app.resume(
        pause_id, reply="ok, but only half", tenant_id="acme", answered_by="manager-17"
    )
    assert result.status is ExecutionStatus.COMPLETED
    assert office.ledger.runs == [("refund", {**REFUND, "amount": 15.0})]


async def test_reply_credentials_are_checked_as_for_a_decision(make_office: MakeOffice) -> None:
    from bot import PauseAnswererError

    office, pause_id = await _refund_pause(make_office)
    with pytest.raises(PauseAnswererError):
        await office.app.resume(pause_id, reply="yes", tenant_id="acme", owner_id="U1")
    await _still_pending(office, pause_id)


async def test_not_understood_keeps_the_pause_with_the_reason(make_office: MakeOffice) -> None:
    office, pause_id = await _refund_pause(make_office)
    with pytest.raises(UninterpretableReplyError) as error:
        await office.app.resume(pause_id, reply="hmm", tenant_id="acme", answered_by="m")
    assert error.value.reason == "say yes or no"
    assert error.value.code == "pause.uninterpretable-reply"
    await _still_pending(office, pause_id)
    done = await office.app.resume(pause_id, reply="yes", tenant_id="acme", answered_by="m")
    assert done.status is ExecutionStatus.COMPLETED


async def test_a_crashing_interpreter_is_unreadable_with_the_error_as_cause(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await _refund_pause(make_office)
    with pytest.raises(UninterpretableReplyError) as error:
        await office.app.resume(pause_id, reply="crash", tenant_id="acme", answered_by="m")
    assert isinstance(error.value.__cause__, RuntimeError)
    assert "interpreter exploded" in error.value.reason
    await _still_pending(office, pause_id)


async def test_an_invalid_answer_is_unreadable(make_office: MakeOffice) -> None:
    office, pause_id = await _refund_pause(make_office)
    with pytest.raises(UninterpretableReplyError) as error:
        await office.app.resume(pause_id, reply="negative", tenant_id="acme", answered_by="m")
    assert "amount" in error.value.reason
    await _still_pending(office, pause_id)
    assert office.ledger.runs == []


async def test_a_sync_interpreter_and_the_spec_example(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    expense = next(p for p in first.pending if p.pause_id)
    assert expense.pause_id is not None
    with pytest.raises(UninterpretableReplyError) as no_json:
        await office.app.resume(expense.pause_id, reply="approve", tenant_id="acme", owner_id="U1")
    assert isinstance(no_json.value.__cause__, ValueError)  # "a text that is no JSON: a crash"
    with pytest.raises(UninterpretableReplyError) as not_button:
        await office.app.resume(expense.pause_id, reply="[1]", tenant_id="acme", owner_id="U1")
    assert "not an expense button" in not_button.value.reason
    result = await office.app.resume(
        expense.pause_id, reply='{"approved": true}', tenant_id="acme", owner_id="U1"
    )
    assert result.status is ExecutionStatus.PAUSED  # the refund still waits
    assert [r[0] for r in office.ledger.runs] == ["expense"]


async def test_the_interpreter_reads_in_the_pause_execution_frame(make_office: MakeOffice) -> None:
    RefundReplyInterpreter.seen.clear()
    office, pause_id = await _refund_pause(make_office)
    paused = await office.app.list_pending(tenant_id="acme")
    await office.app.resume(pause_id, reply="yes", tenant_id="acme", answered_by="manager")
    [context] = RefundReplyInterpreter.seen
    assert context.tenant.tenant_id == "acme"
    assert context.owner_id == "U1"
    assert context.execution_id == paused[0].execution_id
    assert context.step is not None
    assert context.step.call_id == paused[0].ask.call_id
    assert context.step.node_id and context.step.idempotency_key
    assert context.step.idempotency_key.endswith("#0")


async def test_a_role_without_interpreter(make_office: MakeOffice) -> None:
    office, pause_id = await _refund_pause(make_office)
    role = office.app.assembly.roles_by_name["refund-approval-channel"]
    object.__setattr__(role, "reply_interpreter", None)
    try:
        with pytest.raises(ReplyInterpreterMissingError) as error:
            await office.app.resume(pause_id, reply="yes", tenant_id="acme", answered_by="m")
        assert error.value.code == "pause.no-reply-interpreter"
    finally:
        object.__setattr__(role, "reply_interpreter", RefundReplyInterpreter)
    await _still_pending(office, pause_id)
    assert office.ledger.runs == []  # the refund did not run


async def test_a_mocked_code_interpreter(make_office: MakeOffice) -> None:
    interpreter = mock_of(ExpenseReplyInterpreter)
    interpreter.interpret.return_value = ReplyInterpretation.understood({"approved": True})
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    expense = next(p for p in first.pending if p.pause_id)
    assert expense.pause_id is not None
    await office.app.resume(expense.pause_id, reply="whatever", tenant_id="acme", owner_id="U1")
    assert interpreter.interpret.call_count == 1
    [call] = interpreter.interpret.call_args_list
    assert call.args[0].reply == "whatever"
    assert call.args[0].ask.tool == "book-expense-tool"


async def test_unknown_pause_with_a_reply(make_office: MakeOffice) -> None:
    office = await make_office()
    with pytest.raises(UnknownPauseError):
        await office.app.resume("a" * 32, reply="yes", tenant_id="acme", answered_by="m")


async def test_an_interpreters_edit_with_an_unknown_key_is_refused_naming_it(
    make_office: MakeOffice,
) -> None:
    """A misspelt key would otherwise be dropped and the original amount run."""
    office, pause_id = await _refund_pause(make_office)
    interpreter = mock_of(RefundReplyInterpreter)
    interpreter.interpret.return_value = ReplyInterpretation.understood(
        {"approved": True, "override_arguments": {"amout": 20}}
    )
    with pytest.raises(UninterpretableReplyError) as error:
        await office.app.resume(pause_id, reply="ok, 20", tenant_id="acme", answered_by="m")
    assert isinstance(error.value.__cause__, DtoValidationError)
    assert error.value.reason == (
        "amout: This field is not part of the request. Its fields: amount, email, order_id."
    )
    await _still_pending(office, pause_id)
    assert office.ledger.runs == []
