"""The decision boundary, on every way an answer comes in, for a native tool and for an attached
LangChain agent (``create_agent`` + ``HumanInTheLoopMiddleware``) alike.

* A number that is no number (``inf``, ``-inf``, ``nan``, ``1e400`` — too large, it reads as
  infinity) in an edit is refused as the field's error, in our words: through ``App.answer`` /
  ``App.resume``, a reply read by a code interpreter or by a model interpreter, a channel's
  ``ChannelOutcome.decided``. JSON cannot carry it: before, the tool ran with ``None``.
* A decision built without validation (``ToolCallApprovalDecision.model_construct``) is
  validated as if it came from outside: a rejection carrying override arguments fails the step.
* A role's ``reject_reason="required"``: a rejection without its reason is refused (a decision)
  or not understood (a reply, with how to give it); ``"optional"`` (the default) takes it.

Nothing refused here is recorded: the question keeps waiting and a valid answer still runs.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ValidationError

from bot import (
    AgentFailedError,
    Answered,
    App,
    AssemblyError,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    DtoValidationError,
    ExecutionStatus,
    NotUnderstood,
    PauseAnswerer,
    PauseStatus,
    Refused,
    ReplyInput,
    ReplyInterpretation,
    StepFailedError,
    ToolCallApprovalDecision,
    WorkflowStartText,
    channel,
    channel_role,
    reply_interpreter,
    tool,
)
from bot.core.channel import AwaitReply, Decided
from bot.core.field_errors import NOT_FINITE
from bot.runtime.decisions import REASON_REQUIRED, REASON_REQUIRED_IN_WORDS
from bot.testing import FakeClock, ScriptedChatModel, call_tool, mock_llm, reply_with
from interpreters import KeywordReplyInterpreter
from tests.apps import sample_agent, sample_application
from tests.conftest import NO_SETTINGS
from tests.langgraph.kit import CUSTOMER_EMAIL, Refunds, one_refund, refund_agent
from tests.office import Done, Ledger

Path = Literal["native", "attached"]
PATHS: tuple[Path, ...] = ("native", "attached")
NO_NUMBERS: tuple[object, ...] = (math.inf, -math.inf, math.nan, "1e400", "inf", "-Infinity", "NaN")
AMOUNT = "override_arguments.amount"
PYDANTIC_WORDS = ("errors.pydantic.dev", "Input should", "validation error for")


class RefundInput(BaseModel):
    """The refund's arguments: an attached graph's role model fits its tool's arguments."""

    order_id: str
    amount: float
    email: str = CUSTOMER_EMAIL


class Outbox:
    """What the desk's channels were sent; ``decide`` makes them decide at once instead."""

    def __init__(self) -> None:
        self.asks: list[ChannelAsk] = []
        self.decide: Any = None

    def last(self) -> str:
        return self.asks[-1].pause_id


@reply_interpreter(
    name="refund-amount-reply-interpreter",
    description="Keywords, and 'make it <amount>' read with float()",
    decided_by=DecidedBy.CODE,
)
class RefundReplies(KeywordReplyInterpreter):
    def interpret(self, input: ReplyInput) -> ReplyInterpretation[Any]:
        text = input.reply.strip()
        if text.lower().startswith("make it "):
            amount = float(text.removeprefix("make it "))  # float("1e400") is inf
            return ReplyInterpretation.understood(
                {"approved": True, "override_arguments": {"amount": amount}}
            )
        return super().interpret(input)


@reply_interpreter(
    name="payout-model-reply-interpreter",
    description="A model reads the reply",
    decided_by=DecidedBy.MODEL,
    model="moonshotai/kimi-k2.6",
    prompt="Decide approve / reject and any changed amount.",
)
class PayoutReplies: ...


@channel_role(
    name="refund-approval-channel",
    description="A manager approves refunds, a rejection with its reason",
    approves=RefundInput,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=RefundReplies,
    reject_reason="required",
)
class RefundApproval(ChannelOf): ...


@channel_role(
    name="payout-approval-channel",
    description="A manager approves payouts",
    approves=RefundInput,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=PayoutReplies,
)
class PayoutApproval(ChannelOf): ...


async def _send(outbox: Outbox, ask: ChannelAsk) -> AwaitReply | Decided:
    outbox.asks.append(ask)
    if outbox.decide is not None:
        return ChannelOutcome.decided(outbox.decide)
    return ChannelOutcome.await_reply()


@channel(name="outbox-refund-approval-channel", description="Keeps it", deps=[Outbox])
class OutboxRefunds(RefundApproval):
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    async def send(self, ask: ChannelAsk) -> AwaitReply | Decided:
        return await _send(self.outbox, ask)


@channel(name="outbox-payout-approval-channel", description="Keeps it", deps=[Outbox])
class OutboxPayouts(PayoutApproval):
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    async def send(self, ask: ChannelAsk) -> AwaitReply | Decided:
        return await _send(self.outbox, ask)


def _recording_tool(name: str, role: type) -> type:
    @tool(
        name=name,
        description="Moves money",
        input=RefundInput,
        output=Done,
        channel=role,
        deps=[Ledger],
    )
    class MoneyTool:
        def __init__(self, ledger: Ledger) -> None:
            self.ledger = ledger

        def run(self, input: RefundInput) -> Done:
            self.ledger.runs.append((name, input.model_dump()))
            return Done(status="done")

    return MoneyTool


RefundTool = _recording_tool("refund-card-tool", RefundApproval)
PayoutTool = _recording_tool("pay-out-tool", PayoutApproval)
DeskAgent = sample_agent("boundary", tools=[RefundTool, PayoutTool], description="Moves money")
DESK = sample_application("boundary", agent=DeskAgent, channels=[OutboxRefunds, OutboxPayouts])
ARGS = {"order_id": "7", "amount": 40.0}


@dataclass
class Desk:
    app: App
    outbox: Outbox
    ledger: Ledger
    refunds: Refunds  # the attached agent's tool runs
    agent_llm: ScriptedChatModel
    replies_llm: ScriptedChatModel  # the payout role's model interpreter

    async def ask(self, path: Path, role: type = RefundApproval) -> str:
        """Ask one question of ``role`` by ``path``; its pause id (the channel's)."""
        if path == "native":
            tool_class = RefundTool if role is RefundApproval else PayoutTool
            self.agent_llm.then_return(call_tool(tool_class, ARGS), "done")
            result = await self.app.execute(
                DESK.workflow, WorkflowStartText(text="go"), tenant_id="acme", owner_id="U1"
            )
        else:
            graph = refund_agent(one_refund(), self.refunds)
            agent = self.app.langgraph(f"refund-agent-{len(self.outbox.asks)}", graph, role=role)
            result = await agent.ainvoke(
                {"messages": [{"role": "user", "content": "refund order 7"}]},
                thread_id=f"t{len(self.outbox.asks)}",
                tenant_id="acme",
                owner_id="U1",
            )
        assert result.status is ExecutionStatus.PAUSED
        return self.outbox.last()

    def ran(self) -> list[Any]:
        return [*self.ledger.runs, *self.refunds.runs]

    async def waits(self, pause_id: str) -> bool:
        pause = await self.app.find_pause(pause_id, tenant_id="acme")
        return pause is not None and pause.status is PauseStatus.PENDING


@pytest.fixture
async def desk() -> AsyncIterator[Desk]:
    agent_llm, replies_llm = mock_llm(DeskAgent), mock_llm(PayoutReplies)
    outbox, ledger = Outbox(), Ledger()
    async with await App.create(
        DESK.application,
        database_url="sqlite+aiosqlite:///:memory:",
        clock=FakeClock(),
        settings=NO_SETTINGS,
        services={Outbox: outbox, Ledger: ledger},
    ) as app:
        yield Desk(
            app=app,
            outbox=outbox,
            ledger=ledger,
            refunds=Refunds(),
            agent_llm=agent_llm,
            replies_llm=replies_llm,
        )


def edit(amount: object) -> dict[str, Any]:
    return {"approved": True, "override_arguments": {"amount": amount}}


def in_our_words(text: str) -> bool:
    return not any(words in text for words in PYDANTIC_WORDS)


# --------------------------------------------------------------------------------------------
# Numbers that are no numbers.


@pytest.mark.parametrize("amount", NO_NUMBERS, ids=repr)
@pytest.mark.parametrize("path", PATHS)
async def test_an_edit_to_a_number_that_is_no_number_is_the_fields_error(
    desk: Desk, path: Path, amount: object
) -> None:
    pause_id = await desk.ask(path)

    refused = await desk.app.answer(pause_id, tenant_id="acme", by="M1", decision=edit(amount))

    assert isinstance(refused, Refused), refused
    assert isinstance(refused.error, DtoValidationError)
    assert refused.error.field_errors == {AMOUNT: NOT_FINITE}
    assert refused.error.argument_errors() == {"amount": NOT_FINITE}
    assert in_our_words(refused.error.message)
    with pytest.raises(DtoValidationError):
        await desk.app.resume(pause_id, decision=edit(amount), tenant_id="acme", answered_by="M1")
    assert await desk.waits(pause_id)
    assert desk.ran() == []

    done = await desk.app.answer(pause_id, tenant_id="acme", by="M1", decision=edit(12.5))
    assert isinstance(done, Answered) and done.result is not None
    assert done.result.status is ExecutionStatus.COMPLETED
    assert _amounts(desk) == [12.5]


def _amounts(desk: Desk) -> list[float]:
    return [*(r[1]["amount"] for r in desk.ledger.runs), *(r["amount"] for r in desk.refunds.runs)]


@pytest.mark.parametrize("typed", ["1e400", "inf", "nan", "-inf"])
@pytest.mark.parametrize("path", PATHS)
async def test_a_code_interpreter_reading_a_number_that_is_no_number_is_not_understood(
    desk: Desk, path: Path, typed: str
) -> None:
    pause_id = await desk.ask(path)

    outcome = await desk.app.answer(pause_id, tenant_id="acme", by="M1", reply=f"make it {typed}")

    assert isinstance(outcome, NotUnderstood), outcome
    assert NOT_FINITE in outcome.reason and in_our_words(outcome.reason)
    assert await desk.waits(pause_id)
    assert desk.ran() == []
    done = await desk.app.answer(pause_id, tenant_id="acme", by="M1", reply="make it 9")
    assert isinstance(done, Answered)
    assert _amounts(desk) == [9.0]


@pytest.mark.parametrize("path", PATHS)
async def test_a_model_interpreter_giving_a_number_that_is_no_number_is_not_understood(
    desk: Desk, path: Path
) -> None:
    pause_id = await desk.ask(path, PayoutApproval)
    desk.replies_llm.then_return(
        reply_with(ToolCallApprovalDecision, edit("1e400")),  # a number too large: inf
        reply_with(ToolCallApprovalDecision, edit(20.0)),
    )

    outcome = await desk.app.answer(pause_id, tenant_id="acme", by="M1", reply="make it huge")

    assert isinstance(outcome, NotUnderstood), outcome
    assert NOT_FINITE in outcome.reason and in_our_words(outcome.reason)
    assert await desk.waits(pause_id)
    done = await desk.app.answer(pause_id, tenant_id="acme", by="M1", reply="make it 20")
    assert isinstance(done, Answered)
    assert _amounts(desk) == [20.0]


async def _decided_at_once(desk: Desk, path: Path, decision: Any) -> BaseException | None:
    """Ask with the channels deciding ``decision`` at once: the error the call ended with."""
    desk.outbox.decide = decision
    try:
        await desk.ask(path)
    except (AgentFailedError, StepFailedError) as error:
        return error
    except AssertionError:
        return None  # it did not pause: it ran
    return None


@pytest.mark.parametrize("path", PATHS)
async def test_a_channel_deciding_at_once_with_a_number_that_is_no_number_fails_the_step(
    desk: Desk, path: Path
) -> None:
    failed = await _decided_at_once(desk, path, edit(math.inf))

    assert isinstance(failed, AgentFailedError), failed
    assert isinstance(failed.__cause__, DtoValidationError)
    assert failed.__cause__.field_errors == {AMOUNT: NOT_FINITE}
    assert in_our_words(str(failed))
    assert desk.ran() == []


# --------------------------------------------------------------------------------------------
# A decision built without validation.


def unvalidated_rejection() -> ToolCallApprovalDecision:
    return ToolCallApprovalDecision.model_construct(
        approved=False, reason="no", override_arguments={"amount": 1}
    )


@pytest.mark.parametrize("path", PATHS)
async def test_a_decided_at_once_built_without_validation_fails_the_step(
    desk: Desk, path: Path
) -> None:
    """As the spec says of ``ChannelOutcome.decided``: the same check as ``app.resume``, the
    step fails (before, it ran as a plain rejection)."""
    failed = await _decided_at_once(desk, path, unvalidated_rejection())

    assert isinstance(failed, AgentFailedError), failed
    assert isinstance(failed.__cause__, DtoValidationError)
    assert "override_arguments is allowed only with approved=true." in failed.__cause__.message
    assert desk.ran() == []


@pytest.mark.parametrize("path", PATHS)
async def test_a_resume_with_a_decision_built_without_validation_is_refused(
    desk: Desk, path: Path
) -> None:
    pause_id = await desk.ask(path)

    with pytest.raises(DtoValidationError):
        await desk.app.resume(
            pause_id, decision=unvalidated_rejection(), tenant_id="acme", answered_by="M1"
        )
    # built without the field every decision has: approved
    unbuilt = ToolCallApprovalDecision.model_construct(reason="no")  # type: ignore[call-arg]
    refused = await desk.app.answer(pause_id, tenant_id="acme", by="M1", decision=unbuilt)
    assert isinstance(refused, Refused) and refused.code == "dto.invalid"
    assert await desk.waits(pause_id)


# --------------------------------------------------------------------------------------------
# The role's rule for a rejection's reason.


@pytest.mark.parametrize("path", PATHS)
async def test_a_role_that_requires_a_reason_refuses_a_rejection_without_one(
    desk: Desk, path: Path
) -> None:
    pause_id = await desk.ask(path)

    for bare in ({"approved": False}, {"approved": False, "reason": "   "}):
        refused = await desk.app.answer(pause_id, tenant_id="acme", by="M1", decision=bare)
        assert isinstance(refused, Refused), refused
        assert isinstance(refused.error, DtoValidationError)
        assert refused.error.field_errors == {"reason": REASON_REQUIRED}
    with pytest.raises(DtoValidationError):
        await desk.app.resume(
            pause_id, decision={"approved": False}, tenant_id="acme", answered_by="M1"
        )
    unread = await desk.app.answer(pause_id, tenant_id="acme", by="M1", reply="reject")
    assert isinstance(unread, NotUnderstood), unread
    assert unread.reason == REASON_REQUIRED_IN_WORDS
    assert await desk.waits(pause_id)

    done = await desk.app.answer(pause_id, tenant_id="acme", by="M1", reply="reject: too much")
    assert isinstance(done, Answered)
    assert done.pause.decision == ToolCallApprovalDecision(approved=False, reason="too much")
    assert desk.ran() == []


@pytest.mark.parametrize("path", PATHS)
async def test_a_role_with_an_optional_reason_takes_a_rejection_without_one(
    desk: Desk, path: Path
) -> None:
    pause_id = await desk.ask(path, PayoutApproval)

    done = await desk.app.answer(pause_id, tenant_id="acme", by="M1", decision={"approved": False})

    assert isinstance(done, Answered)
    assert done.pause.reject_reason == "optional"


@pytest.mark.parametrize("path", PATHS)
async def test_a_channel_rejecting_at_once_without_a_required_reason_fails_the_step(
    desk: Desk, path: Path
) -> None:
    failed = await _decided_at_once(desk, path, {"approved": False})

    assert isinstance(failed, AgentFailedError), failed
    assert isinstance(failed.__cause__, DtoValidationError)
    assert failed.__cause__.field_errors == {"reason": REASON_REQUIRED}


async def test_the_pause_says_whether_its_role_requires_a_reason(desk: Desk) -> None:
    pause_id = await desk.ask("native")

    pause = await desk.app.find_pause(pause_id, tenant_id="acme")

    assert pause is not None and pause.reject_reason == "required"


async def test_reject_reason_is_required_or_optional_at_assembly() -> None:
    @channel_role(
        name="sloppy-approval-channel",
        description="A typo in its rule",
        approves=RefundInput,
        answered_by=PauseAnswerer.CHANNEL,
        reject_reason="mandatory",  # type: ignore[arg-type]
    )
    class Sloppy(ChannelOf): ...

    @channel(name="outbox-sloppy-approval-channel", description="Keeps it", deps=[Outbox])
    class OutboxSloppy(Sloppy):
        async def send(self, ask: ChannelAsk) -> AwaitReply:
            return ChannelOutcome.await_reply()

    sloppy_tool = _recording_tool("sloppy-tool", Sloppy)
    sloppy = sample_application(
        "sloppy",
        agent=sample_agent("sloppy", tools=[sloppy_tool], description="x"),
        channels=[OutboxSloppy],
    )
    mock_llm(sloppy.agent)
    with pytest.raises(AssemblyError) as refused:
        await App.create(sloppy.application, database_url="sqlite+aiosqlite:///:memory:")
    assert refused.value.rules == ["channel-role.reject-reason"]
    assert "'mandatory'" in str(refused.value)


# --------------------------------------------------------------------------------------------
# What a failure says.


class Strict(BaseModel):
    count: int


@tool(name="strict-tool", description="Validates something of its own", input=RefundInput)
class StrictTool:
    def run(self, input: RefundInput) -> Done:
        Strict.model_validate({"count": "many"})  # a bug of the tool's: a ValidationError
        return Done(status="never")


async def test_a_run_that_fails_on_a_validation_error_says_so_in_our_words() -> None:
    """What fails a run reaches the requester (Slack says it in their thread): never pydantic's
    text or its documentation link."""
    strict = sample_application(
        "strict", agent=sample_agent("strict", tools=[StrictTool], description="x")
    )
    mock_llm(strict.agent).then_return(call_tool(StrictTool, ARGS), "done")
    async with await App.create(
        strict.application, database_url="sqlite+aiosqlite:///:memory:", settings=NO_SETTINGS
    ) as app:
        with pytest.raises(StepFailedError) as failed:
            await app.execute(
                strict.workflow, WorkflowStartText(text="go"), tenant_id="acme", owner_id="U1"
            )
    said = str(failed.value)
    assert in_our_words(said), said
    assert "Strict is not valid: count: Enter a whole number." in said
    assert isinstance(failed.value.__cause__, ValidationError)


async def test_an_input_execute_refuses_is_said_in_our_words(desk: Desk) -> None:
    with pytest.raises(DtoValidationError) as refused:
        await desk.app.execute(DESK.workflow, {"text": 5}, tenant_id="acme", owner_id="U1")

    assert in_our_words(str(refused.value)), refused.value
    assert refused.value.field_errors == {"text": "Enter a text."}
