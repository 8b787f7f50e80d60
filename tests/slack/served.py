"""An application ``python -m bot serve`` can load in a subprocess (``COUNTERSIGN_APP``).

Its agent is the demo's offline model (no network, no provider): asked anything, it calls the
refund and the expense tools at once, then summarises what happened. Both roles are answered
by the thread's owner, in their Slack thread.
"""

from __future__ import annotations

from bot import (
    DecidedBy,
    PauseAnswerer,
    WorkflowFinishText,
    WorkflowStartText,
    agent,
    application,
    channel_role,
    reply_interpreter,
    start,
    tool,
    workflow,
    workflow_finish,
    workflow_start,
)
from bot.core.channel import ChannelOf
from bot.desk.office import Done, ExpenseInput, RefundCardInput
from bot.desk.offline_model import OfflineDemoModel
from channels.slack import slack_channel
from interpreters import KeywordReplyInterpreter

CONVERSATION = "C0SERVED"


@reply_interpreter(
    name="served-refund-reply-interpreter", description="Keywords", decided_by=DecidedBy.CODE
)
class ServedRefundReplyInterpreter(KeywordReplyInterpreter): ...


@channel_role(
    name="served-refund-approval-channel",
    description="The owner approves refunds",
    approves=RefundCardInput,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=ServedRefundReplyInterpreter,
)
class ServedRefundRole(ChannelOf): ...


@channel_role(
    name="served-expense-approval-channel",
    description="The owner approves expenses",
    approves=ExpenseInput,
    answered_by=PauseAnswerer.THREAD_OWNER,
)
class ServedExpenseRole(ChannelOf): ...


@tool(
    name="refund-card-tool",
    description="Refunds a card",
    input=RefundCardInput,
    output=Done,
    channel=ServedRefundRole,
)
class ServedRefundTool:
    def run(self, input: RefundCardInput) -> Done:
        return Done(status=f"refunded {input.amount:.2f} on order {input.order_id}")


@tool(
    name="book-expense-tool",
    description="Books an expense",
    input=ExpenseInput,
    output=Done,
    channel=ServedExpenseRole,
)
class ServedExpenseTool:
    def run(self, input: ExpenseInput) -> Done:
        return Done(status=f"booked {input.amount:.2f} for {input.purpose}")


@agent(
    name="served-agent",
    description="Refunds and books",
    prompt="Do it.",
    model=OfflineDemoModel(),
    tools=[ServedRefundTool, ServedExpenseTool],
)
class ServedAgent: ...


@workflow_start(name="served-workflow-start", description="A request", input=WorkflowStartText)
class ServedStart: ...


@workflow_finish(name="served-workflow-finish", description="Answer", output=WorkflowFinishText)
class ServedFinish: ...


@workflow(
    name="served-workflow",
    version="1.0.0",
    flow=[
        start(ServedStart).returns(WorkflowStartText).to_agent(ServedAgent).to_finish(ServedFinish)
    ],
)
class ServedWorkflow: ...


@application(
    name="served",
    workflows=[ServedWorkflow],
    channels=[
        slack_channel(
            ServedRefundRole, name="slack-served-refund-channel", conversation=CONVERSATION
        ),
        slack_channel(
            ServedExpenseRole, name="slack-served-expense-channel", conversation=CONVERSATION
        ),
    ],
)
class ServedApplication: ...
