"""The office desk: the example application of ``python -m bot demo``, and its offline model.

An agent is asked to refund a card and book an expense; both tools need the approval of the
person at the terminal (the thread's owner), so the agent's one model turn pauses twice at once.
The model is ``OfflineDemoModel`` (``bot.desk.offline_model``): scripted, no network, no provider.
"""

from __future__ import annotations

from bot import (
    ChannelOf,
    DecidedBy,
    PauseAnswerer,
    application,
    channel,
    channel_role,
    reply_interpreter,
)
from bot.desk.office import ExpenseInput, RefundCardInput, desk_tools, desk_workflow
from bot.desk.offline_model import OfflineDemoModel
from channels.terminal import TerminalOutput, TerminalUserChannel
from interpreters import KeywordReplyInterpreter

REQUEST = "Refund order A-1001 (120.00, it arrived broken) and book Friday's team lunch (86.50)."


# ------------------------------------------------------------------------------- the tools


# One role per tool input (a role approves one input model), each with its own interpreter
# class: an interpreter belongs to one role.


@reply_interpreter(
    name="refund-keyword-reply-interpreter",
    description="Reads approve / reject[: reason] in a reply to a refund",
    decided_by=DecidedBy.CODE,
)
class RefundReplyInterpreter(KeywordReplyInterpreter): ...


@reply_interpreter(
    name="expense-keyword-reply-interpreter",
    description="Reads approve / reject[: reason] in a reply to an expense",
    decided_by=DecidedBy.CODE,
)
class ExpenseReplyInterpreter(KeywordReplyInterpreter): ...


@channel_role(
    name="refund-approval-channel",
    description="The person at the terminal approves card refunds",
    approves=RefundCardInput,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=RefundReplyInterpreter,
    reject_reason="required",  # a refund turned down says why: "reject: wrong customer"
    question="Refund {amount} to the card of order {order_id}?",
)
class RefundApprovalChannel(ChannelOf): ...


@channel_role(
    name="expense-approval-channel",
    description="The person at the terminal approves expenses",
    approves=ExpenseInput,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=ExpenseReplyInterpreter,
    question="Book {amount} for {purpose}?",
)
class ExpenseApprovalChannel(ChannelOf): ...


@channel(
    name="terminal-refund-approval-channel",
    description="Asks for a refund's approval in the terminal",
    deps=[TerminalOutput],
)
class TerminalRefundApprovalChannel(RefundApprovalChannel, TerminalUserChannel): ...


@channel(
    name="terminal-expense-approval-channel",
    description="Asks for an expense's approval in the terminal",
    deps=[TerminalOutput],
)
class TerminalExpenseApprovalChannel(ExpenseApprovalChannel, TerminalUserChannel): ...


RefundCardTool, BookExpenseTool = desk_tools(RefundApprovalChannel, ExpenseApprovalChannel)


# ------------------------------------------------------------------------------- the application


OfficeDeskWorkflow = desk_workflow(
    (RefundCardTool, BookExpenseTool),
    model=OfflineDemoModel(),
    description="Refunds cards and books expenses, each after the person's approval",
)


@application(
    name="office-desk",
    description="The demo: an office desk agent whose tool calls the terminal's user approves",
    workflows=[OfficeDeskWorkflow],
    channels=[TerminalRefundApprovalChannel, TerminalExpenseApprovalChannel],
)
class OfficeDeskApplication: ...
