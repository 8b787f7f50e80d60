"""The spec's reply-interpreter example as a Python application, for the model-interpreter tests.

A refund read by a chat model ("moonshotai/kimi-k2.6") through its answer tool, a deposit return
read by a decision model ("typesafe/jev-1.13"), an expense read by code (a button's JSON value).
``desk_application(...)`` makes the workflow and the application with the budgets, PII policies
and providers a test needs.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel

from bot import (
    App,
    Budget,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    ExecutionContext,
    ExecutionResult,
    PauseAnswerer,
    PauseStatus,
    PiiPolicy,
    ReplyInput,
    ReplyInterpretation,
    Sensitive,
    Settings,
    WorkflowStartText,
    channel,
    channel_role,
    reply_interpreter,
    tool,
)
from bot.core.channel import AwaitReply
from bot.models.provider import ModelProvider
from bot.runtime.model_overrides import override_for
from bot.testing import FakeClock, ScriptedChatModel, call_tool, inspect_app, mock_llm
from tests.apps import sample_agent, sample_application

KIMI = "moonshotai/kimi-k2.6"
JEV = "typesafe/jev-1.13"
REFUND_PROMPT = (
    "The manager answered a refund approval in free text. "
    "Decide approve / reject and any changed amount."
)
DEPOSIT_PROMPT = "The clerk answered a deposit return."


class RefundCardInput(BaseModel):
    order_id: str
    amount: float
    email: Annotated[str, Sensitive()] = "jane@example.com"
    note: str = ""


class DepositReturn(BaseModel):
    lease_id: str
    amount: float


class ExpenseInput(BaseModel):
    purpose: str
    amount: float


class DeskDone(BaseModel):
    status: str


class Runs:
    """What the tools really did (a service: one per App)."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, dict[str, Any]]] = []


class Desk:
    """The pauses the channels were asked (a service: one per App)."""

    def __init__(self) -> None:
        self.asks: list[ChannelAsk] = []

    def pause_of(self, tool: str) -> str:
        return [ask for ask in self.asks if ask.value.tool == tool][-1].pause_id


# --------------------------------------------------------------------------------------------
# The interpreters of the spec's example


@reply_interpreter(
    name="refund-reply-interpreter",
    description="Turns a manager's free-text reply into a refund decision",
    decided_by=DecidedBy.MODEL,
    model=KIMI,
    prompt=REFUND_PROMPT,
    deps=[ExecutionContext],
)
class RefundReplyInterpreter:
    contexts: ClassVar[list[ExecutionContext]] = []

    def __init__(self, context: ExecutionContext) -> None:
        RefundReplyInterpreter.contexts.append(context)


@reply_interpreter(
    name="deposit-reply-interpreter",
    description="Reads whether a clerk's reply approves a deposit return",
    decided_by=DecidedBy.MODEL,
    model=JEV,
    prompt=DEPOSIT_PROMPT,
)
class DepositReplyInterpreter: ...


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


# --------------------------------------------------------------------------------------------
# Roles, channels, tools, the agent


@channel_role(
    name="refund-approval-channel",
    description="Approves card refunds",
    approves=RefundCardInput,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=RefundReplyInterpreter,
)
class RefundApprovalChannel(ChannelOf): ...


@channel_role(
    name="deposit-approval-channel",
    description="A clerk approves deposit returns",
    approves=DepositReturn,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=DepositReplyInterpreter,
)
class DepositApprovalChannel(ChannelOf): ...


@channel_role(
    name="expense-approval-channel",
    description="The thread's owner confirms an expense with two buttons",
    approves=ExpenseInput,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=ExpenseReplyInterpreter,
)
class ExpenseApprovalChannel(ChannelOf): ...


async def _posted(desk: Desk, ask: ChannelAsk) -> AwaitReply:
    desk.asks.append(ask)
    return ChannelOutcome.await_reply()


@channel(name="slack-refund-approval-channel", description="Asks a manager", deps=[Desk])
class SlackRefundApprovalChannel(RefundApprovalChannel):
    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        return await _posted(self.desk, ask)


@channel(name="desk-deposit-approval-channel", description="Asks the clerk on duty", deps=[Desk])
class DeskDepositApprovalChannel(DepositApprovalChannel):
    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        return await _posted(self.desk, ask)


@channel(name="button-expense-approval-channel", description="Shows two buttons", deps=[Desk])
class ButtonExpenseApprovalChannel(ExpenseApprovalChannel):
    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        return await _posted(self.desk, ask)


@tool(
    name="refund-card-tool",
    description="Refunds a card",
    input=RefundCardInput,
    output=DeskDone,
    channel=RefundApprovalChannel,
    deps=[Runs],
)
class RefundCardTool:
    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    def run(self, input: RefundCardInput) -> DeskDone:
        self.runs.runs.append(("refund", input.model_dump()))
        return DeskDone(status=f"refunded {input.amount}")


@tool(
    name="return-deposit-tool",
    description="Returns a deposit",
    input=DepositReturn,
    output=DeskDone,
    channel=DepositApprovalChannel,
    deps=[Runs],
)
class ReturnDepositTool:
    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    def run(self, input: DepositReturn) -> DeskDone:
        self.runs.runs.append(("deposit", input.model_dump()))
        return DeskDone(status=f"returned the deposit of {input.lease_id}")


@tool(
    name="book-expense-tool",
    description="Books an expense",
    input=ExpenseInput,
    output=DeskDone,
    channel=ExpenseApprovalChannel,
    deps=[Runs],
)
class BookExpenseTool:
    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    def run(self, input: ExpenseInput) -> DeskDone:
        self.runs.runs.append(("expense", input.model_dump()))
        return DeskDone(status=f"booked {input.purpose}")


OfficeAgent = sample_agent(
    "office",
    tools=[RefundCardTool, ReturnDepositTool, BookExpenseTool],
    description="Refunds cards, returns deposits and books expenses",
)


# --------------------------------------------------------------------------------------------
# Applications made to measure


def desk_application(
    *,
    budget: Budget | None = None,
    workflow_budget: Budget | None = None,
    pii_policies: Sequence[PiiPolicy] = (),
    workflow_pii_policies: Sequence[PiiPolicy] = (),
    providers: Sequence[ModelProvider] = (),
) -> tuple[type, type]:
    """A workflow and the application that runs it (``(application, workflow)``)."""
    desk = sample_application(
        "office",
        agent=OfficeAgent,
        channels=[
            SlackRefundApprovalChannel,
            DeskDepositApprovalChannel,
            ButtonExpenseApprovalChannel,
        ],
        budget=budget,
        workflow_budget=workflow_budget,
        pii_policies=pii_policies,
        workflow_pii_policies=workflow_pii_policies,
        providers=providers,
    )
    return desk.application, desk.workflow


REFUND = {"order_id": "7", "amount": 30.0, "email": "jane@example.com", "note": ""}
DEPOSIT = {"lease_id": "L-12", "amount": 800.0}
EXPENSE = {"purpose": "taxi", "amount": 12.0}


def script_agent(
    *calls: tuple[type, dict[str, Any]], executions: int = 1, answered: bool = True
) -> ScriptedChatModel:
    """The agent asks for the tool calls in one turn, then (once answered) says it is done.

    ``answered=False``: each execution's question stays unanswered (no final turn scripted).
    """
    turn = [call_tool(tool, args) for tool, args in calls] or [call_tool(RefundCardTool, REFUND)]
    model = mock_llm(OfficeAgent)
    for _ in range(executions):
        model.then_return(turn, *(["done"] if answered else []))
    return model


@dataclass
class DeskApp:
    app: App
    workflow: type
    desk: Desk
    runs: Runs
    clock: FakeClock

    async def execute(self, tenant_id: str = "acme", owner_id: str = "U1") -> ExecutionResult:
        return await self.app.execute(
            self.workflow,
            WorkflowStartText(text="please"),
            tenant_id=tenant_id,
            owner_id=owner_id,
        )

    async def status(self, pause_id: str, tenant_id: str = "acme") -> PauseStatus:
        record = await inspect_app(self.app).store.find(tenant_id, pause_id)
        assert record is not None
        return record.status

    async def idempotency_key(self, pause_id: str, tenant_id: str = "acme") -> str:
        record = await inspect_app(self.app).store.find(tenant_id, pause_id)
        assert record is not None
        return record.idempotency_key


@asynccontextmanager
async def open_desk(
    clock: FakeClock | None = None,
    *,
    database_url: str = "sqlite+aiosqlite:///:memory:",
    stand_ins: bool = True,
    **options: Any,
) -> AsyncIterator[DeskApp]:
    """An App of ``desk_application(**options)``; script the models before opening it.

    ``stand_ins``: a model interpreter the test did not script gets a scripted model with no
    answers (its name needs no provider then); False to resolve every name by the providers.
    """
    if stand_ins:
        if override_for(RefundReplyInterpreter) is None:
            mock_llm(RefundReplyInterpreter)
        if override_for(DepositReplyInterpreter) is None:
            mock_llm(DepositReplyInterpreter, decision_model=True)
    application_cls, workflow_cls = desk_application(**options)
    desk, runs = Desk(), Runs()
    clock = clock or FakeClock()
    app = await App.create(
        application_cls,
        database_url=database_url,
        clock=clock,
        settings=Settings(),
        services={Desk: desk, Runs: runs},
    )
    try:
        yield DeskApp(app=app, workflow=workflow_cls, desk=desk, runs=runs, clock=clock)
    finally:
        await app.close()
