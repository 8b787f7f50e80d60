"""The office desk both built-in applications serve: the terminal demo and the Slack desk.

What a desk does is the same everywhere — refund a card, book an expense, each after an
approval; where it asks differs (the terminal, Slack), and one application has one channel
implementation per role (the spec's "Not yet"). So each desk declares its own roles and
channels, and builds its tools, agent and workflow here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from bot.components.decorators import (
    agent,
    application,
    channel_role,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from bot.components.flow import start
from bot.core.channel import ChannelOf
from bot.core.dtos import WorkflowFinishText, WorkflowStartText
from bot.core.enums import PauseAnswerer

REFUND_TOOL = "refund-card-tool"
EXPENSE_TOOL = "book-expense-tool"
REFUND_ROLE = "desk-refund-approval-channel"
"""The role that approves the desk's refunds (an attached agent asks it too)."""
DESK_PROMPT = (
    "You run the office desk. Refund cards and book expenses as asked, with the tools. "
    "When a tool call is rejected, say so and why. Answer briefly."
)


class RefundCardInput(BaseModel):
    order_id: str = Field(description="The order whose card is refunded")
    amount: float = Field(gt=0, description="How much to refund")


class ExpenseInput(BaseModel):
    purpose: str = Field(description="What the expense was for")
    amount: float = Field(gt=0)


class Done(BaseModel):
    status: str


@workflow_start(name="office-desk-workflow-start", description="A request", input=WorkflowStartText)
class DeskStart: ...


@workflow_finish(
    name="office-desk-workflow-finish", description="The agent's answer", output=WorkflowFinishText
)
class DeskFinish: ...


def desk_tools(refund_role: type, expense_role: type) -> tuple[type, type]:
    """The desk's two tools, each asking its role before it runs."""

    @tool(
        name=REFUND_TOOL,
        description="Refunds an amount to the card an order was paid with",
        input=RefundCardInput,
        output=Done,
        channel=refund_role,
    )
    class RefundCardTool:
        def run(self, input: RefundCardInput) -> Done:
            return Done(status=f"refunded {input.amount:.2f} to the card of order {input.order_id}")

    @tool(
        name=EXPENSE_TOOL,
        description="Books an expense in the ledger",
        input=ExpenseInput,
        output=Done,
        channel=expense_role,
    )
    class BookExpenseTool:
        def run(self, input: ExpenseInput) -> Done:
            return Done(status=f"booked {input.amount:.2f} for {input.purpose}")

    return RefundCardTool, BookExpenseTool


def desk_workflow(tools: tuple[type, type], *, model: Any, description: str) -> type:
    """The desk's workflow: one agent with the two tools, on ``model`` (a name or a model)."""

    @agent(
        name="office-desk-agent",
        description=description,
        prompt=DESK_PROMPT,
        model=model,
        tools=list(tools),
    )
    class OfficeDeskAgent: ...

    @workflow(
        name="office-desk-workflow",
        version="1.0.0",
        flow=[
            start(DeskStart)
            .returns(WorkflowStartText)
            .to_agent(OfficeDeskAgent)
            .to_finish(DeskFinish)
        ],
    )
    class OfficeDeskWorkflow: ...

    return OfficeDeskWorkflow


def desk_roles(
    *,
    refund_answered_by: PauseAnswerer,
    refund_description: str,
    interpreters: tuple[type, type],
    prefix: str,
) -> tuple[type, type]:
    """The desk's two roles: refunds (answered as ``refund_answered_by``, a rejection with its
    reason) and expenses (the requester confirms), each read by its own interpreter (an
    interpreter serves one role)."""
    refund_interpreter, expense_interpreter = interpreters
    refund = channel_role(
        name=REFUND_ROLE,
        description=refund_description,
        approves=RefundCardInput,
        answered_by=refund_answered_by,
        reply_interpreter=refund_interpreter,
        reject_reason="required",  # a refund turned down says why, on every channel of the desk
    )(type(f"{prefix}RefundApprovalChannel", (ChannelOf,), {"__module__": __name__}))
    expense = channel_role(
        name="desk-expense-approval-channel",
        description="The requester confirms an expense",
        approves=ExpenseInput,
        answered_by=PauseAnswerer.THREAD_OWNER,
        reply_interpreter=expense_interpreter,
    )(type(f"{prefix}ExpenseApprovalChannel", (ChannelOf,), {"__module__": __name__}))
    return refund, expense


def desk_application(
    *, name: str, description: str, roles: tuple[type, type], channels: list[type], model: Any
) -> type:
    """The desk application ``name``: the desk's workflow over ``roles``, asked through
    ``channels`` (one implementation per role)."""
    desk = desk_workflow(
        desk_tools(*roles),
        model=model,
        description="Refunds cards and books expenses, each after a person's approval",
    )
    return application(
        name=name,
        description=description,
        workflows=[desk],
        channels=channels,
        entry_workflow=desk,
    )(type("OfficeDeskApplication", (), {"__module__": __name__}))
