"""Spec: "Answering with free text" — model reply interpreters and decision models.

The spec's example: RefundReplyInterpreter on "moonshotai/kimi-k2.6" reads "ok, but only half"
through its answer tool; DepositReplyInterpreter on the decision model "typesafe/jev-1.13" reads
yes / no; ExpenseReplyInterpreter reads a button's value by code.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, SystemMessage
from pydantic import BaseModel

from bot import (
    AssemblyError,
    AssemblyViolation,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    ExecutionStatus,
    PauseAnswerer,
    PauseStatus,
    SetupError,
    ToolCallApprovalDecision,
    UninterpretableReplyError,
    agent,
    channel,
    reply_interpreter,
    tool,
)
from bot.components.specs import SPEC_ATTRIBUTE, ChannelRoleSpec
from bot.core.channel import AwaitReply
from bot.core.sensitive import MASK
from bot.runtime.assembly import assemble
from bot.runtime.decision_models import DECISION_QUESTION, answer_dto_of
from bot.testing import decide_with, mock_llm, reply_with
from tests.apps import sample_application
from tests.runtime.reply_desk import (
    DEPOSIT,
    DEPOSIT_PROMPT,
    EXPENSE,
    JEV,
    KIMI,
    REFUND,
    REFUND_PROMPT,
    BookExpenseTool,
    DepositReplyInterpreter,
    DepositReturn,
    DeskApp,
    ExpenseReplyInterpreter,
    OfficeAgent,
    RefundCardTool,
    RefundReplyInterpreter,
    ReturnDepositTool,
    desk_application,
    open_desk,
    script_agent,
)

HALF = reply_with(
    ToolCallApprovalDecision, {"approved": True, "override_arguments": {"amount": 15.0}}
)


async def _refund_pause(desk: DeskApp) -> str:
    result = await desk.execute()
    assert result.status is ExecutionStatus.PAUSED
    return desk.desk.pause_of("refund-card-tool")


async def _assert_unreadable_and_pending(
    desk: DeskApp, pause_id: str, reply: str, *, reason: str
) -> UninterpretableReplyError:
    with pytest.raises(UninterpretableReplyError) as caught:
        await desk.app.resume(pause_id, reply=reply, tenant_id="acme", answered_by="manager-17")
    assert reason in caught.value.reason
    assert caught.value.code == "pause.uninterpretable-reply"
    assert await desk.status(pause_id) is PauseStatus.PENDING
    assert desk.runs.runs == []
    return caught.value


# --------------------------------------------------------------------------------------------
# The answer tool


async def test_the_spec_example_ok_but_only_half_on_kimi() -> None:
    script_agent()
    model = mock_llm(RefundReplyInterpreter).when(reply="ok, but only half").then_return(HALF)
    async with open_desk() as desk:
        pause_id = await _refund_pause(desk)
        result = await desk.app.resume(
            pause_id, reply="ok, but only half", tenant_id="acme", answered_by="manager-17"
        )
    assert result.status is ExecutionStatus.COMPLETED
    assert desk.runs.runs == [("refund", {**REFUND, "amount": 15.0})]
    [call] = model.calls
    [system, question] = call.messages
    assert isinstance(system, SystemMessage) and system.content == REFUND_PROMPT
    text = str(question.content)
    assert text.startswith("### ask\n") and text.endswith("\n\n### reply\nok, but only half")
    ask = json.loads(text.split("\n", 1)[1].split("\n\n### reply")[0])
    assert ask["tool"] == "refund-card-tool"
    assert ask["arguments"]["amount"] == 30.0  # the amount to halve is in ask.arguments


async def test_exactly_one_answer_tool_with_the_decision_schema() -> None:
    script_agent()
    model = mock_llm(RefundReplyInterpreter).then_return(HALF)
    async with open_desk() as desk:
        pause_id = await _refund_pause(desk)
        await desk.app.resume(pause_id, reply="half", tenant_id="acme", answered_by="m")
    [tool] = model.calls[0].tools
    function = tool["function"]
    assert function["name"] == "answer"
    schema = function["parameters"]
    assert set(schema["properties"]) == {"approved", "reason", "override_arguments"}
    assert schema["required"] == ["approved"]
    overrides = schema["properties"]["override_arguments"]["anyOf"][0]
    assert set(overrides["properties"]) == {"order_id", "amount", "email", "note"}
    assert overrides["additionalProperties"] is False


async def test_the_answer_is_validated_by_the_tool_input() -> None:
    script_agent()
    mock_llm(RefundReplyInterpreter).then_return(
        reply_with(
            ToolCallApprovalDecision, {"approved": True, "override_arguments": {"amount": "lots"}}
        ),
        reply_with(ToolCallApprovalDecision, {"approved": True}),
    )
    async with open_desk() as desk:
        pause_id = await _refund_pause(desk)
        error = await _assert_unreadable_and_pending(desk, pause_id, "lots", reason="amount")
        assert error.__cause__ is not None
        result = await desk.app.resume(pause_id, reply="fine", tenant_id="acme", answered_by="m")
    assert result.status is ExecutionStatus.COMPLETED
    assert desk.runs.runs == [("refund", REFUND)]


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ("Sure, approve it.", "no answer"),
        (
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "answer", "args": {"approved": True}, "id": "a"},
                    {"name": "answer", "args": {"approved": False}, "id": "b"},
                ],
            ),
            "2 answers",
        ),
        (
            AIMessage(
                content="",
                invalid_tool_calls=[
                    {"name": "answer", "args": "{approved: yes", "id": "a", "error": "bad JSON"}
                ],
            ),
            "not valid JSON",
        ),
        (
            AIMessage(content="", tool_calls=[{"name": "answer", "args": {"ok": 1}, "id": "a"}]),
            "approved",
        ),
        (
            AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "answer",
                        "args": {"approved": False, "override_arguments": {"amount": 1}},
                        "id": "a",
                    }
                ],
            ),
            "only with approved=true",
        ),
    ],
    ids=["no-answer", "several-answers", "invalid-json", "invalid-answer", "overrides-rejected"],
)
async def test_a_model_that_gives_no_valid_answer_leaves_the_pause_pending(
    response: Any, reason: str
) -> None:
    script_agent()
    mock_llm(RefundReplyInterpreter).then_return(
        response, reply_with(ToolCallApprovalDecision, {"approved": False, "reason": "no"})
    )
    async with open_desk() as desk:
        pause_id = await _refund_pause(desk)
        await _assert_unreadable_and_pending(desk, pause_id, "hmm", reason=reason)
        result = await desk.app.resume(pause_id, reply="no", tenant_id="acme", answered_by="m")
    assert result.status is ExecutionStatus.COMPLETED  # the agent was told the refusal
    assert desk.runs.runs == []


async def test_a_model_error_is_unreadable_with_the_error_as_cause() -> None:
    script_agent()
    mock_llm(RefundReplyInterpreter).then_return(TimeoutError("the endpoint timed out"))
    async with open_desk() as desk:
        pause_id = await _refund_pause(desk)
        error = await _assert_unreadable_and_pending(desk, pause_id, "yes", reason="timed out")
        assert isinstance(error.__cause__, TimeoutError)
        # the pause survives the bad reply: a decision still answers it
        result = await desk.app.resume(
            pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert result.status is ExecutionStatus.COMPLETED


async def test_sensitive_fields_are_masked_and_an_echoed_mask_keeps_the_real_value() -> None:
    script_agent()
    model = mock_llm(RefundReplyInterpreter).then_return(
        reply_with(
            ToolCallApprovalDecision,
            {"approved": True, "override_arguments": {"amount": 10.0, "email": MASK}},
        )
    )
    async with open_desk() as desk:
        pause_id = await _refund_pause(desk)
        await desk.app.resume(
            pause_id,
            reply="only 10, and jane@example.com is right",
            tenant_id="acme",
            answered_by="m",
        )
    text = str(model.calls[0].messages[-1].content)
    assert "jane@example.com" not in text  # neither in the ask nor repeated in the reply
    assert MASK in text
    assert desk.runs.runs == [("refund", {**REFUND, "amount": 10.0})]


# --------------------------------------------------------------------------------------------
# The execution frame


async def test_a_model_interpreter_reads_in_the_pause_execution_frame() -> None:
    RefundReplyInterpreter.contexts.clear()
    script_agent()
    model = mock_llm(RefundReplyInterpreter).then_return(HALF)
    async with open_desk() as desk:
        pause_id = await _refund_pause(desk)
        [pending] = await desk.app.list_pending(tenant_id="acme")
        key = await desk.idempotency_key(pause_id)
        await desk.app.resume(pause_id, reply="half", tenant_id="acme", answered_by="manager-17")
    [context] = RefundReplyInterpreter.contexts  # the interpreter's deps got the frame
    assert context.tenant.tenant_id == "acme"
    assert context.owner_id == "U1"  # the thread's owner, whoever answered
    assert context.execution_id == pending.execution_id
    assert context.step is not None
    assert context.step.call_id == pending.ask.call_id
    assert context.step.node_id
    assert context.step.idempotency_key == key
    metadata = model.calls[0].metadata  # the provider's call sees the tenant
    assert metadata["tenant_id"] == "acme"
    assert metadata["execution_id"] == pending.execution_id
    assert metadata["countersign_caller"] == "reply-interpreter:refund-reply-interpreter"
    assert pause_id not in json.dumps(metadata, default=str)


# --------------------------------------------------------------------------------------------
# Instructions: prompt and prompt URLs


async def test_prompt_urls_are_read_once_after_the_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = tmp_path / "rules.md"
    rules.write_text("Amounts above 500 need a reason.\n", encoding="utf-8")
    data = "data:text/plain;base64," + base64.b64encode(b"Answer in English.").decode()
    spec = RefundReplyInterpreter.__countersign_spec__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        RefundReplyInterpreter,
        "__countersign_spec__",
        type(spec)(**{**_fields(spec), "prompt_urls": (rules.as_uri(), data)}),
    )
    script_agent(executions=2)
    model = mock_llm(RefundReplyInterpreter).then_return(HALF, HALF)
    async with open_desk() as desk:
        for _ in range(2):
            pause_id = await _refund_pause(desk)
            await desk.app.resume(pause_id, reply="half", tenant_id="acme", answered_by="m")
            rules.write_text("changed later: never read", encoding="utf-8")
    for call in model.calls:
        assert call.messages[0].content == (
            f"{REFUND_PROMPT}\n\nAmounts above 500 need a reason.\n\nAnswer in English."
        )


async def test_an_unreadable_prompt_url_leaves_the_pause_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = RefundReplyInterpreter.__countersign_spec__  # type: ignore[attr-defined]
    missing = (tmp_path / "missing.md").as_uri()
    monkeypatch.setattr(
        RefundReplyInterpreter,
        "__countersign_spec__",
        type(spec)(**{**_fields(spec), "prompt_urls": (missing,)}),
    )
    script_agent()
    model = mock_llm(RefundReplyInterpreter).then_return(HALF)
    async with open_desk() as desk:
        pause_id = await _refund_pause(desk)
        await _assert_unreadable_and_pending(desk, pause_id, "half", reason="missing.md")
    assert model.calls == []


def _fields(spec: Any) -> dict[str, Any]:
    return {name: getattr(spec, name) for name in spec.__dataclass_fields__}


# --------------------------------------------------------------------------------------------
# Decision models


@pytest.mark.parametrize(
    ("p_yes", "approved"), [(0.9, True), (0.51, True), (0.5, False), (0.1, False)]
)
async def test_a_decision_model_approves_when_p_yes_is_above_one_half(
    p_yes: float, approved: bool
) -> None:
    script_agent((ReturnDepositTool, DEPOSIT))
    model = mock_llm(DepositReplyInterpreter).then_return(decide_with(approved=p_yes))
    async with open_desk() as desk:
        await desk.execute()
        pause_id = desk.desk.pause_of("return-deposit-tool")
        result = await desk.app.resume(
            pause_id, reply="give it back to her", tenant_id="acme", answered_by="clerk-3"
        )
        record = await desk.app.get_result(result.execution_id, tenant_id="acme", record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert desk.runs.runs == ([("deposit", DEPOSIT)] if approved else [])
    assert record.record is not None
    [entry] = record.record.pauses
    # { approved } only: never a reason or override_arguments
    assert entry.decision == {"approved": approved, "reason": None, "override_arguments": None}
    [call] = model.calls
    assert call.tools == []  # no answer tool: one yes / no
    [system, question] = call.messages
    assert system.content == f"{DECISION_QUESTION}\n\n{DEPOSIT_PROMPT}"
    assert str(question.content).startswith("### ask\n")
    assert str(question.content).endswith("### reply\ngive it back to her")


async def test_a_decision_model_without_log_probabilities_is_unreadable() -> None:
    script_agent((ReturnDepositTool, DEPOSIT))
    mock_llm(DepositReplyInterpreter, decision_model=True).then_return(AIMessage(content="yes"))
    async with open_desk() as desk:
        await desk.execute()
        pause_id = desk.desk.pause_of("return-deposit-tool")
        with pytest.raises(UninterpretableReplyError) as caught:
            await desk.app.resume(pause_id, reply="yes", tenant_id="acme", answered_by="c")
        assert "log-probabilities" in caught.value.reason
        assert await desk.status(pause_id) is PauseStatus.PENDING


def test_a_decision_model_script_takes_only_yes_or_no() -> None:
    with pytest.raises(SetupError):
        mock_llm(DepositReplyInterpreter).then_return(
            decide_with(approved=0.9), reply_with(ToolCallApprovalDecision, {"approved": True})
        )
    model = mock_llm(RefundReplyInterpreter).then_return(HALF)
    with pytest.raises(SetupError):
        model.when(reply="yes").then_return(decide_with(approved=0.9))


def test_mock_llm_of_a_code_interpreter_is_a_setup_error() -> None:
    with pytest.raises(SetupError, match="code interpreter"):
        mock_llm(ExpenseReplyInterpreter)


# --------------------------------------------------------------------------------------------
# All three forms side by side, as in the spec


async def test_the_spec_office_with_all_three_interpreters() -> None:
    script_agent((RefundCardTool, REFUND), (ReturnDepositTool, DEPOSIT), (BookExpenseTool, EXPENSE))
    mock_llm(RefundReplyInterpreter).when(reply="ok, but only half").then_return(HALF)
    mock_llm(DepositReplyInterpreter).then_return(decide_with(approved=0.9))
    async with open_desk() as desk:
        first = await desk.execute()
        assert len(first.pending) == 3
        expense = next(p for p in first.pending if p.pause_id)  # the owner's pause id is listed
        assert expense.pause_id is not None
        with pytest.raises(UninterpretableReplyError) as no_json:
            await desk.app.resume(
                expense.pause_id, reply="approve", tenant_id="acme", owner_id="U1"
            )
        assert isinstance(no_json.value.__cause__, ValueError)
        await desk.app.resume(
            expense.pause_id, reply='{"approved": true}', tenant_id="acme", owner_id="U1"
        )
        await desk.app.resume(
            desk.desk.pause_of("return-deposit-tool"),
            reply="yes, return it",
            tenant_id="acme",
            answered_by="clerk-3",
        )
        done = await desk.app.resume(
            desk.desk.pause_of("refund-card-tool"),
            reply="ok, but only half",
            tenant_id="acme",
            answered_by="manager-17",
        )
    assert done.status is ExecutionStatus.COMPLETED
    assert sorted(desk.runs.runs, key=lambda run: run[0]) == [
        ("deposit", DEPOSIT),
        ("expense", EXPENSE),
        ("refund", {**REFUND, "amount": 15.0}),
    ]


# --------------------------------------------------------------------------------------------
# Assembly


class ShippingAnswer(BaseModel):
    carrier: str


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionRoleSpec(ChannelRoleSpec):
    """A question role (ask + answer), built by hand until the decorators offer one."""

    answers: type[BaseModel]


@reply_interpreter(
    name="shipping-reply-interpreter",
    description="Reads which carrier the clerk chose",
    decided_by=DecidedBy.MODEL,
    model=JEV,
    prompt="The clerk named a carrier.",
)
class ShippingReplyInterpreter: ...


class ShippingChannel(ChannelOf): ...


setattr(
    ShippingChannel,
    SPEC_ATTRIBUTE,
    QuestionRoleSpec(
        name="shipping-question-channel",
        description="Asks which carrier ships a parcel",
        cls=ShippingChannel,
        approves=DepositReturn,
        answered_by=PauseAnswerer.CHANNEL,
        reply_interpreter=ShippingReplyInterpreter,
        answers=ShippingAnswer,
    ),
)


@channel(name="desk-shipping-channel", description="Asks the clerk")
class DeskShippingChannel(ShippingChannel):
    async def send(self, ask: ChannelAsk) -> AwaitReply:
        return ChannelOutcome.await_reply()


@tool(name="ship-tool", description="Ships", input=DepositReturn, channel=ShippingChannel)
class ShipTool:
    def run(self, input: DepositReturn) -> dict[str, str]:
        return {"status": "shipped"}


@agent(name="shipping-agent", description="Ships", prompt="Ship.", model=KIMI, tools=[ShipTool])
class ShippingAgent: ...


@dataclass
class NamesProvider:
    """Serves model names without calling anything (assembly only)."""

    served: tuple[str, ...]
    decision: tuple[str, ...] = ()
    name: str = "names"

    def serves(self, model: str) -> bool:
        return model in self.served

    def chat_model(self, model: str) -> Any:
        raise AssertionError("assembly never makes a chat model")

    def is_decision_model(self, model: str) -> bool:
        return model in self.decision


def _shipping_application() -> type:
    return sample_application(
        "shipping", agent=ShippingAgent, channels=[DeskShippingChannel]
    ).application


def _rules(application: type, providers: Sequence[Any] = ()) -> list[AssemblyViolation]:
    try:
        assemble(application, providers)
    except AssemblyError as error:
        return list(error.violations)
    return []


def test_a_question_role_on_a_decision_model_is_an_assembly_error() -> None:
    mock_llm(ShippingAgent)
    mock_llm(ShippingReplyInterpreter).then_return(decide_with(approved=0.9))

    violations = _rules(_shipping_application())

    [violation] = violations
    assert violation.rule == "reply-interpreter.decision-model"
    assert violation.component == "shipping-reply-interpreter"
    assert "ShippingAnswer" in violation.message  # the message names the answer DTO


def test_a_provider_that_says_decision_model_counts_too() -> None:
    mock_llm(ShippingAgent)
    decision = NamesProvider(served=(JEV,), decision=(JEV,))
    chat = NamesProvider(served=(JEV,))

    assert [v.rule for v in _rules(_shipping_application(), [decision])] == [
        "reply-interpreter.decision-model"
    ]
    assert _rules(_shipping_application(), [chat]) == []  # a chat model answers with a tool


def test_an_approval_role_may_use_a_decision_model() -> None:
    mock_llm(OfficeAgent)
    application_cls, _ = desk_application()
    providers = [NamesProvider(served=(KIMI, JEV), decision=(JEV,))]

    assert _rules(application_cls, providers) == []
    roles = {role.name: role for role in assemble(application_cls, providers).roles.values()}
    assert answer_dto_of(roles["deposit-approval-channel"]) is ToolCallApprovalDecision


def test_model_interpreters_are_checked_with_the_channel_rules() -> None:
    mock_llm(OfficeAgent)
    application_cls, _ = desk_application()

    rules = {(v.rule, v.component) for v in _rules(application_cls, [])}

    assert rules == {
        ("model.unserved", "refund-reply-interpreter"),
        ("model.unserved", "deposit-reply-interpreter"),
    }
    assert _rules(application_cls, [NamesProvider(served=(KIMI, JEV))]) == []


def test_mock_llm_needs_no_provider_for_the_interpreter() -> None:
    mock_llm(OfficeAgent)
    mock_llm(RefundReplyInterpreter)
    mock_llm(DepositReplyInterpreter, decision_model=True)
    application_cls, _ = desk_application()

    assert _rules(application_cls, []) == []


def test_prompt_urls_budgets_and_policies_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = RefundReplyInterpreter.__countersign_spec__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        RefundReplyInterpreter,
        "__countersign_spec__",
        type(spec)(**{**_fields(spec), "prompt_urls": ("ftp://example.com/prompt.md",)}),
    )
    mock_llm(OfficeAgent)
    mock_llm(RefundReplyInterpreter)
    mock_llm(DepositReplyInterpreter, decision_model=True)
    application_cls, _ = desk_application(
        budget={"max_calls": 3},  # type: ignore[arg-type]
        workflow_pii_policies=["email"],  # type: ignore[list-item]
    )

    rules = {(v.rule, v.component) for v in _rules(application_cls)}

    assert rules == {
        ("reply-interpreter.prompt-url", "refund-reply-interpreter"),
        ("budget.invalid", "office"),
        ("pii-policy.invalid", "office-workflow"),
    }
