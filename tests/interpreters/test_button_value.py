"""The button-value interpreter: a button's JSON value in, a decision out."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.dtos import ToolCallApprovalAsk, ToolCallApprovalDecision
from bot.core.reply import ReplyInput, ReplyInterpretation
from interpreters import ButtonValueReplyInterpreter

ASK = ToolCallApprovalAsk(tool="expense-tool", arguments={"amount": 42}, call_id="c1")
INTERPRETER = ButtonValueReplyInterpreter()


def interpret(reply: str) -> ReplyInterpretation[ToolCallApprovalDecision]:
    return INTERPRETER.interpret(ReplyInput(ask=ASK, reply=reply))


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"approved": true}', ToolCallApprovalDecision(approved=True)),
        ('{"approved": false}', ToolCallApprovalDecision(approved=False)),
        (' { "approved" : true } ', ToolCallApprovalDecision(approved=True)),
        (
            '{"approved": false, "reason": "over budget"}',
            ToolCallApprovalDecision(approved=False, reason="over budget"),
        ),
        ('{"approved": true, "reason": null}', ToolCallApprovalDecision(approved=True)),
        ('{"approved": true, "reason": "  "}', ToolCallApprovalDecision(approved=True)),
    ],
)
def test_reads_a_button_value(reply: str, expected: ToolCallApprovalDecision) -> None:
    result = interpret(reply)

    assert result.is_understood
    assert result.value == expected
    assert result.reason is None


@pytest.mark.parametrize(
    "reply",
    [
        "true",
        "null",
        "42",
        '"approve"',
        "[]",
        '[{"approved": true}]',
        "{}",
        '{"approved": "true"}',
        '{"approved": 1}',
        '{"approved": null}',
        '{"approve": true}',
        '{"approved": true, "reason": 5}',
        '{"approved": true, "override_arguments": {"amount": 1}}',
        '{"approved": true, "extra": 1}',
        json.dumps({"approved": False, "reason": "x" * 3001}),
    ],
)
def test_json_that_is_no_button_value_is_not_understood(reply: str) -> None:
    result = interpret(reply)

    assert not result.is_understood
    assert result.value is None
    assert result.reason is not None
    assert result.reason.startswith("not a button value: ")


def test_the_echoed_reply_is_cut_to_about_100_characters() -> None:
    reply = json.dumps({"approved": "yes", "note": "n" * 500})

    result = interpret(reply)

    assert result.reason == f"not a button value: {reply[:99]}…"


@pytest.mark.parametrize("reply", ["", "approve", "yes please", "{approved: true}", "{'a': 1}"])
def test_text_that_is_no_json_is_a_crash(reply: str) -> None:
    with pytest.raises(ValueError, match="a button value must be JSON") as raised:
        interpret(reply)

    assert isinstance(raised.value.__cause__, json.JSONDecodeError)


@settings(database=None)
@given(st.text())
def test_any_text_is_a_decision_not_understood_or_a_value_error(reply: str) -> None:
    try:
        result = interpret(reply)
    except ValueError:
        return
    assert result.is_understood == isinstance(result.value, ToolCallApprovalDecision)
    assert result.value is None or result.value.override_arguments is None


@settings(database=None)
@given(st.booleans(), st.one_of(st.none(), st.text(max_size=200)))
def test_any_well_formed_value_is_understood(approved: bool, reason: str | None) -> None:
    result = interpret(json.dumps({"approved": approved, "reason": reason}))

    assert result.value is not None
    assert result.value.approved is approved
    assert result.value.reason == (reason if reason and reason.strip() else None)


def test_is_registered_as_a_code_reply_interpreter() -> None:
    spec = ButtonValueReplyInterpreter.__countersign_spec__  # type: ignore[attr-defined]

    assert spec.name == "button-value-reply-interpreter"
    assert spec.decided_by == "CODE"
