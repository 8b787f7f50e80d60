"""A small office application used across the runtime tests."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, Field

from bot import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelWithdrawal,
    DecidedBy,
    ExecutionContext,
    PauseAnswerer,
    PauseTiming,
    ReplyInput,
    ReplyInterpretation,
    Sensitive,
    channel,
    channel_role,
    reply_interpreter,
    tool,
)
from bot.components.specs import ChannelRoleSpec, spec_of
from bot.core.channel import AwaitReply
from bot.core.dtos import RejectReason
from interpreters import KeywordReplyInterpreter
from tests.apps import sample_agent, sample_application


class RefundCardInput(BaseModel):
    order_id: str
    amount: float
    email: Annotated[str, Sensitive()] = "customer@example.com"


class ExpenseInput(BaseModel):
    purpose: str
    amount: float


class LookupInput(BaseModel):
    order_id: str


class Done(BaseModel):
    status: str


class Ledger:
    """Counts what the tools really did (a service: one per App)."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, dict[str, Any]]] = []
        self.contexts: list[ExecutionContext] = []


class Gate:
    """Holds a branch until a question was sent, so tests never depend on timing.

    Armed by a test (``ASKED.arm()``); every recording channel's send opens it.
    """

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None

    def arm(self) -> None:
        self._event = asyncio.Event()

    def disarm(self) -> None:
        self._event = None

    def open(self) -> None:
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        if self._event is not None:
            await asyncio.wait_for(self._event.wait(), timeout=10)


ASKED = Gate()


class Inbox:
    """What the recording channels were sent and told (a service: one per App)."""

    def __init__(self) -> None:
        self.asks: list[ChannelAsk] = []
        self.withdrawals: list[ChannelWithdrawal] = []
        self.contexts: list[ExecutionContext] = []
        self.fail_send: Exception | None = None
        self.decide: Any = None

    def last(self, tool: str) -> ChannelAsk:
        return [a for a in self.asks if a.value.tool == tool][-1]


@reply_interpreter(
    name="expense-reply-interpreter",
    description="Reads an expense button's value",
    decided_by=DecidedBy.CODE,
)
class ExpenseReplyInterpreter:
    def interpret(self, input: ReplyInput) -> ReplyInterpretation[Any]:
        value = json.loads(input.reply)  # a text that is no JSON: a crash
        if not isinstance(value, dict) or "approved" not in value:
            return ReplyInterpretation.not_understood(
                reason=f"not an expense button: {input.reply}"
            )
        return ReplyInterpretation.understood({"approved": value["approved"] is True})


@reply_interpreter(
    name="refund-reply-interpreter",
    description="Reads a manager's words",
    decided_by=DecidedBy.CODE,
    deps=[ExecutionContext],
)
class RefundReplyInterpreter:
    seen: ClassVar[list[ExecutionContext]] = []

    def __init__(self, context: ExecutionContext) -> None:
        self.context = context

    async def interpret(self, input: ReplyInput) -> ReplyInterpretation[Any]:
        RefundReplyInterpreter.seen.append(self.context)
        text = input.reply.strip().lower()
        if text == "ok, but only half":
            half = input.ask.arguments["amount"] / 2
            return ReplyInterpretation.understood(
                {"approved": True, "override_arguments": {"amount": half}}
            )
        if text in ("yes", "approve"):
            return ReplyInterpretation.understood({"approved": True})
        if text.startswith("no"):
            return ReplyInterpretation.understood(
                {"approved": False, "reason": text[2:].strip(" :") or None}
            )
        if text == "crash":
            raise RuntimeError("interpreter exploded")
        if text == "negative":
            return ReplyInterpretation.understood(
                {"approved": True, "override_arguments": {"amount": "lots"}}
            )
        return ReplyInterpretation.not_understood(reason="say yes or no")


@channel_role(
    name="refund-approval-channel",
    description="Approves card refunds",
    approves=RefundCardInput,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=RefundReplyInterpreter,
)
class RefundApprovalChannel(ChannelOf): ...


@channel_role(
    name="expense-approval-channel",
    description="The thread's owner confirms an expense",
    approves=ExpenseInput,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=ExpenseReplyInterpreter,
)
class ExpenseApprovalChannel(ChannelOf): ...


async def _record_send(inbox: Inbox, context: ExecutionContext, ask: ChannelAsk) -> Any:
    inbox.asks.append(ask)
    inbox.contexts.append(context)
    ASKED.open()
    if inbox.fail_send is not None:
        raise inbox.fail_send
    if inbox.decide is not None:
        return ChannelOutcome.decided(inbox.decide)
    return ChannelOutcome.await_reply()


@channel(
    name="recording-refund-approval-channel",
    description="Records what it is sent",
    deps=[Inbox, ExecutionContext],
)
class RecordingRefundChannel(RefundApprovalChannel):
    def __init__(self, inbox: Inbox, context: ExecutionContext) -> None:
        self.inbox = inbox
        self.context = context

    async def send(self, ask: ChannelAsk) -> Any:
        return await _record_send(self.inbox, self.context, ask)

    async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
        self.inbox.withdrawals.append(withdrawal)


@channel(
    name="recording-expense-approval-channel",
    description="Records what it is sent",
    deps=[Inbox, ExecutionContext],
)
class RecordingExpenseChannel(ExpenseApprovalChannel):
    def __init__(self, inbox: Inbox, context: ExecutionContext) -> None:
        self.inbox = inbox
        self.context = context

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        return await _record_send(self.inbox, self.context, ask)  # type: ignore[no-any-return]

    async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
        self.inbox.withdrawals.append(withdrawal)


@tool(
    name="refund-card-tool",
    description="Refunds a card",
    input=RefundCardInput,
    output=Done,
    channel=RefundApprovalChannel,
    deps=[Ledger, ExecutionContext],
)
class RefundCardTool:
    def __init__(self, ledger: Ledger, context: ExecutionContext) -> None:
        self.ledger = ledger
        self.context = context

    async def run(self, input: RefundCardInput) -> Done:
        self.ledger.runs.append(("refund", input.model_dump()))
        self.ledger.contexts.append(self.context)
        return Done(status=f"refunded {input.amount} on order {input.order_id}")


@tool(
    name="book-expense-tool",
    description="Books an expense",
    input=ExpenseInput,
    output=Done,
    channel=ExpenseApprovalChannel,
    deps=[Ledger],
)
class BookExpenseTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: ExpenseInput) -> Done:
        self.ledger.runs.append(("expense", input.model_dump()))
        return Done(status=f"booked {input.purpose}")


@tool(
    name="lookup-order-tool",
    description="Looks an order up",
    input=LookupInput,
    deps=[Ledger],
)
class LookupOrderTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: LookupInput) -> dict[str, Any]:
        self.ledger.runs.append(("lookup", input.model_dump()))
        return {"order_id": input.order_id, "amount": 42.0}


OfficeAgent = sample_agent(
    "office",
    tools=[RefundCardTool, BookExpenseTool, LookupOrderTool],
    description="Refunds cards and books expenses",
)
OFFICE = sample_application(
    "office", agent=OfficeAgent, channels=[RecordingRefundChannel, RecordingExpenseChannel]
)
OfficeWorkflow = OFFICE.workflow
OfficeApplication = OFFICE.application


class WireInput(BaseModel):
    """What the wire role approves (an attached graph's wire tool is shown by it too)."""

    iban: str = Field(title="Account (IBAN)", min_length=4)
    amount: float


def office_roles(
    office: str,
    *,
    refund_input: type[BaseModel],
    wire_timing: PauseTiming | None = None,
    refund_reject_reason: RejectReason = "optional",
) -> tuple[type, type, type]:
    """The refund, expense and wire roles of a channel's test office (``office``: "slack",
    "web"), each office's own classes:

    * refunds: a CHANNEL role; replies read by the keyword interpreter; its rejections need a
      reason when ``refund_reject_reason="required"``;
    * expenses: a THREAD_OWNER role (the requester confirms); keyword interpreter;
    * wires: a CHANNEL role with separation of duties and no reply interpreter (only the
      buttons answer it), with ``wire_timing`` on its questions.
    """

    @reply_interpreter(
        name=f"{office}-refund-reply-interpreter",
        description="Reads approve / reject in a reply to a refund",
        decided_by=DecidedBy.CODE,
    )
    class RefundReplyInterpreter(KeywordReplyInterpreter): ...

    @reply_interpreter(
        name=f"{office}-expense-reply-interpreter",
        description="Reads approve / reject in a reply to an expense",
        decided_by=DecidedBy.CODE,
    )
    class ExpenseReplyInterpreter(KeywordReplyInterpreter): ...

    @channel_role(
        name="refund-approval-channel",
        description="A manager approves card refunds",
        approves=refund_input,
        answered_by=PauseAnswerer.CHANNEL,
        reply_interpreter=RefundReplyInterpreter,
        reject_reason=refund_reject_reason,
    )
    class RefundApprovalChannel(ChannelOf): ...

    @channel_role(
        name="expense-approval-channel",
        description="The requester confirms an expense",
        approves=ExpenseInput,
        answered_by=PauseAnswerer.THREAD_OWNER,
        reply_interpreter=ExpenseReplyInterpreter,
    )
    class ExpenseApprovalChannel(ChannelOf): ...

    @channel_role(
        name="wire-approval-channel",
        description="A manager approves wires, with the buttons only",
        approves=WireInput,
        answered_by=PauseAnswerer.CHANNEL,
        separation_of_duties=True,  # whoever asks for a wire cannot approve it
        timing=wire_timing,
    )
    class WireApprovalChannel(ChannelOf): ...

    return RefundApprovalChannel, ExpenseApprovalChannel, WireApprovalChannel


def _approves(role: type) -> type[BaseModel]:
    spec = spec_of(role)
    assert isinstance(spec, ChannelRoleSpec)
    return spec.approves


def recording_office_tools(roles: tuple[type, type, type]) -> tuple[type, type, type]:
    """A refund, an expense and a wire tool asking ``office_roles``'s roles (each taking what
    its role approves) and recording their runs in the ``Ledger``."""
    refund_role, expense_role, wire_role = roles
    refund_input, wire_input = _approves(refund_role), _approves(wire_role)

    @tool(
        name="refund-card-tool",
        description="Refunds a card",
        input=refund_input,
        output=Done,
        channel=refund_role,
        deps=[Ledger],
    )
    class RefundCardTool:
        def __init__(self, ledger: Ledger) -> None:
            self.ledger = ledger

        def run(self, input: Any) -> Done:
            self.ledger.runs.append(("refund", input.model_dump()))
            return Done(status=f"refunded {input.amount} on order {input.order_id}")

    @tool(
        name="book-expense-tool",
        description="Books an expense",
        input=ExpenseInput,
        output=Done,
        channel=expense_role,
        deps=[Ledger],
    )
    class BookExpenseTool:
        def __init__(self, ledger: Ledger) -> None:
            self.ledger = ledger

        def run(self, input: ExpenseInput) -> Done:
            self.ledger.runs.append(("expense", input.model_dump()))
            return Done(status=f"booked {input.purpose}")

    @tool(
        name="wire-money-tool",
        description="Wires money",
        input=wire_input,
        output=Done,
        channel=wire_role,
        deps=[Ledger],
    )
    class WireMoneyTool:
        def __init__(self, ledger: Ledger) -> None:
            self.ledger = ledger

        def run(self, input: Any) -> Done:
            self.ledger.runs.append(("wire", input.model_dump()))
            return Done(status=f"wired {input.amount}")

    return RefundCardTool, BookExpenseTool, WireMoneyTool
