"""Spec: a model interpreter reads the question and the reply through the application's and the
workflow's PII policies: a replace-with-token value is a token for the model and revealed before
validation (the tool gets the real value), a token no map knows is a decline (the pause stays
pending), a block-with-refusal value throws PiiRefusedError before any call.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot import (
    CardNumberDetector,
    EmailDetector,
    PauseStatus,
    PhoneDetector,
    PiiPolicy,
    PiiRefusedError,
    SensitiveFields,
    ToolCallApprovalAsk,
    ToolCallApprovalDecision,
    UninterpretableReplyError,
    allow_unmasked,
    block_with_refusal,
    replace_with_token,
)
from bot.core.pii import PiiAction, luhn_valid
from bot.core.reply import ReplyInput
from bot.core.sensitive import MASK
from bot.runtime.pii import UnknownTokenError, shield
from bot.testing import ScriptedChatModel, inspect_app, mock_llm, reply_with
from tests.runtime.reply_desk import (
    REFUND,
    DeskApp,
    RefundCardTool,
    RefundReplyInterpreter,
    open_desk,
    script_agent,
)

EMAIL_TOKEN = PiiPolicy(detector=EmailDetector(), action=replace_with_token())
PHONE_TOKEN = PiiPolicy(detector=PhoneDetector(), action=replace_with_token())
CARD_BLOCK = PiiPolicy(detector=CardNumberDetector(), action=block_with_refusal())
VISA = "4111 1111 1111 1111"


def _approve(**overrides: Any) -> Any:
    return reply_with(
        ToolCallApprovalDecision, {"approved": True, "override_arguments": overrides or None}
    )


def _read_by_model(model: ScriptedChatModel, call: int = 0) -> str:
    return str(model.calls[call].messages[-1].content)


async def _pause(desk: DeskApp) -> str:
    await desk.execute()
    return desk.desk.pause_of("refund-card-tool")


# --------------------------------------------------------------------------------------------
# Detectors


@pytest.mark.parametrize(
    ("detector", "text", "found"),
    [
        (
            EmailDetector(),
            "write to jane.doe+x@mail.example.co.uk today",
            ["jane.doe+x@mail.example.co.uk"],
        ),
        (EmailDetector(), "no address @ here, nor a@b", []),
        (
            PhoneDetector(),
            "call +1 415-555-0100 or (030) 1234 5678",
            ["+1 415-555-0100", "(030) 1234 5678"],
        ),
        (PhoneDetector(), "mobile 0151 23456789", ["0151 23456789"]),
        (PhoneDetector(), "on 2024-01-15, amount 1234.50, order 123456789", []),
        (CardNumberDetector(), f"card {VISA} or 5555555555554444", [VISA, "5555555555554444"]),
        (CardNumberDetector(), "not a card: 4111 1111 1111 1112", []),
        (PhoneDetector(), f"card {VISA}", []),  # too many digits for a phone
    ],
)
def test_the_shipped_detectors(detector: Any, text: str, found: list[str]) -> None:
    assert [text[m.start : m.end] for m in detector.find(text)] == found


def test_luhn() -> None:
    assert luhn_valid("4111111111111111")
    assert luhn_valid("378282246310005")
    assert not luhn_valid("4111111111111112")
    assert not luhn_valid("")


def test_a_policy_is_checked_when_made() -> None:
    with pytest.raises(TypeError):
        PiiPolicy(detector=EmailDetector(), action="replace")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        PiiPolicy(detector="email", action=replace_with_token())  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Tokens and their reveal


def _input(reply: str, **arguments: Any) -> ReplyInput:
    ask = ToolCallApprovalAsk(tool="t", arguments=arguments, call_id="c1")
    return ReplyInput(ask=ask, reply=reply)


def test_the_same_value_is_the_same_token_and_reveals_with_its_type() -> None:
    shielded = shield(
        [EMAIL_TOKEN, PiiPolicy(detector=CardNumberDetector(), action=replace_with_token())],
        _input("a@example.com, not b@example.com; a@example.com", card=4111111111111111),
        frozenset(),
    )

    assert shielded.reply == "<EMAIL_1>, not <EMAIL_2>; <EMAIL_1>"
    assert shielded.ask["arguments"] == {"card": "<CARD_NUMBER_1>"}
    assert shielded.reveal({"card": "<CARD_NUMBER_1>", "note": "to <EMAIL_2>"}) == {
        "card": 4111111111111111,
        "note": "to b@example.com",
    }
    with pytest.raises(UnknownTokenError):
        shielded.reveal({"note": "<EMAIL_3>"})


def test_token_like_text_in_the_input_is_never_confused_with_a_token() -> None:
    shielded = shield([EMAIL_TOKEN], _input("<EMAIL_1> means a@example.com"), frozenset())

    assert shielded.reply == "<EMAIL_1> means <EMAIL_2>"
    assert shielded.reveal({"reason": "<EMAIL_1> is <EMAIL_2>"}) == {
        "reason": "<EMAIL_1> is a@example.com"
    }
    assert shielded.reveal({"reason": "<PHONE_1>"}) == {"reason": "<PHONE_1>"}  # not our label


# --------------------------------------------------------------------------------------------
# Through the App


async def test_a_tokenised_value_reaches_the_tool_as_the_real_value() -> None:
    script_agent()
    model = mock_llm(RefundReplyInterpreter).then_return(_approve(note="new contact: <EMAIL_1>"))
    async with open_desk(pii_policies=[EMAIL_TOKEN]) as desk:
        pause_id = await _pause(desk)
        await desk.app.resume(
            pause_id,
            reply="ok, and note the new contact jane.new@mail.example",
            tenant_id="acme",
            answered_by="m",
        )
    read = _read_by_model(model)
    assert "jane.new@mail.example" not in read
    assert read.endswith("### reply\nok, and note the new contact <EMAIL_1>")
    assert desk.runs.runs == [("refund", {**REFUND, "note": "new contact: jane.new@mail.example"})]


async def test_a_token_no_map_knows_is_a_decline() -> None:
    script_agent()
    mock_llm(RefundReplyInterpreter).then_return(_approve(note="<EMAIL_2>"), _approve())
    async with open_desk(pii_policies=[EMAIL_TOKEN]) as desk:
        pause_id = await _pause(desk)
        with pytest.raises(UninterpretableReplyError) as caught:
            await desk.app.resume(
                pause_id, reply="ok, cc jane@x.example", tenant_id="acme", answered_by="m"
            )
        assert "<EMAIL_2>" in caught.value.reason
        assert isinstance(caught.value.__cause__, UnknownTokenError)
        assert await desk.status(pause_id) is PauseStatus.PENDING
        await desk.app.resume(pause_id, reply="ok", tenant_id="acme", answered_by="m")
    assert desk.runs.runs == [("refund", REFUND)]


@pytest.mark.parametrize(
    ("where", "reply", "refund"),
    [
        ("the reply", f"yes, pay it back to {VISA}", REFUND),
        ("the question's argument 'note'", "yes", {**REFUND, "note": f"card {VISA}"}),
    ],
)
async def test_block_with_refusal_throws_before_any_call(
    where: str, reply: str, refund: dict[str, Any]
) -> None:
    script_agent((RefundCardTool, refund))
    model = mock_llm(RefundReplyInterpreter).then_return(_approve())
    async with open_desk(workflow_pii_policies=[CARD_BLOCK]) as desk:
        pause_id = await _pause(desk)
        with pytest.raises(PiiRefusedError) as caught:
            await desk.app.resume(pause_id, reply=reply, tenant_id="acme", answered_by="m")
        assert caught.value.code == "pii.refused"
        assert where in caught.value.message
        assert VISA not in str(caught.value)
        assert await desk.status(pause_id) is PauseStatus.PENDING  # untouched
        root = desk.desk.asks[-1].execution_id
        assert await inspect_app(desk.app).ledger.calls("acme", root) == []
    assert model.calls == []


async def test_the_application_and_the_workflow_policies_both_apply() -> None:
    script_agent()
    model = mock_llm(RefundReplyInterpreter).then_return(_approve())
    async with open_desk(pii_policies=[EMAIL_TOKEN], workflow_pii_policies=[PHONE_TOKEN]) as desk:
        pause_id = await _pause(desk)
        await desk.app.resume(
            pause_id,
            reply="ok; reach me at boss@corp.example or +1 415-555-0100",
            tenant_id="acme",
            answered_by="m",
        )
    assert _read_by_model(model).endswith("reach me at <EMAIL_1> or <PHONE_1>")


@pytest.mark.parametrize(
    ("action", "shown"),
    [
        (None, MASK),
        (PiiAction.REPLACE_WITH_TOKEN, "<SENSITIVE_1>"),
        (PiiAction.ALLOW_UNMASKED, "jane@example.com"),
    ],
)
async def test_sensitive_fields_reach_the_model_only_as_a_policy_allows(
    action: PiiAction | None, shown: str
) -> None:
    policies = [] if action is None else [PiiPolicy(detector=SensitiveFields(), action=action)]
    script_agent()
    model = mock_llm(RefundReplyInterpreter).then_return(_approve(amount=10.0, email=shown))
    async with open_desk(pii_policies=policies) as desk:
        pause_id = await _pause(desk)
        await desk.app.resume(pause_id, reply="only 10", tenant_id="acme", answered_by="m")
    read = _read_by_model(model)
    assert f'"email": "{shown}"' in read
    if action is not PiiAction.ALLOW_UNMASKED:
        assert "jane@example.com" not in read
    assert desk.runs.runs == [("refund", {**REFUND, "amount": 10.0})]  # the real e-mail


async def test_sensitive_fields_can_be_refused_outright() -> None:
    script_agent()
    model = mock_llm(RefundReplyInterpreter).then_return(_approve())
    policy = PiiPolicy(detector=SensitiveFields(), action=block_with_refusal())
    async with open_desk(workflow_pii_policies=[policy]) as desk:
        pause_id = await _pause(desk)
        with pytest.raises(PiiRefusedError, match="sensitive field"):
            await desk.app.resume(pause_id, reply="yes", tenant_id="acme", answered_by="m")
    assert model.calls == []


def test_the_strictest_sensitive_field_policy_wins() -> None:
    policies = [
        PiiPolicy(detector=SensitiveFields(), action=allow_unmasked()),
        PiiPolicy(detector=SensitiveFields(), action=replace_with_token()),
    ]

    shielded = shield(
        policies, _input("send to a@example.com", email="a@example.com"), frozenset({"email"})
    )

    assert shielded.ask["arguments"] == {"email": "<SENSITIVE_1>"}
    assert shielded.reply == "send to <SENSITIVE_1>"  # its value repeated in the reply too
