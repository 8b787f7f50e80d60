"""The Slack office desk with questions that expire, for ``python -m bot serve`` in a subprocess
(``COUNTERSIGN_APP=tests.slack.expiring_desk:ExpiringDesk``): the Slack outage run
(``tests.slack.outages``) asks some questions that expire, and some that are withdrawn, while
Slack fails.

Asked anything, its model does what the desk's offline model does (a refund and an expense,
approved in the desk channel and in the requester's thread). Asked something *urgent*, it
calls an urgent refund instead, whose question expires after ``EXPIRE_AFTER_SETTING`` seconds
and fails the step: the execution fails, and the expense asked beside it is withdrawn.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any, Final

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from bot import (
    DecidedBy,
    OnExpiry,
    PauseAnswerer,
    PauseTiming,
    WorkflowStartText,
    agent,
    application,
    reply_interpreter,
    start,
    tool,
    workflow,
)
from bot.desk.office import (
    DESK_PROMPT,
    DeskFinish,
    DeskStart,
    Done,
    RefundCardInput,
    desk_roles,
    desk_tools,
)
from bot.desk.offline_model import OfflineDemoModel, next_message
from channels.slack import slack_channel
from interpreters import KeywordReplyInterpreter
from tests.slack.burst import DESK
from tests.slack.office import MANAGER

EXPIRE_AFTER_SETTING: Final = "OUTAGE_EXPIRE_AFTER_SECONDS"
URGENT: Final = "urgent"
"""A request whose text says it is asked the urgent refund (its question expires)."""
URGENT_TOOL: Final = "urgent-refund-card-tool"
EXPENSE_CALL: Final = {"purpose": "team lunch", "amount": 86.5}


def expire_after() -> timedelta:
    return timedelta(seconds=float(os.environ.get(EXPIRE_AFTER_SETTING, "5")))


@reply_interpreter(
    name="outage-refund-reply-interpreter", description="Keywords", decided_by=DecidedBy.CODE
)
class OutageRefundReplyInterpreter(KeywordReplyInterpreter): ...


@reply_interpreter(
    name="outage-expense-reply-interpreter", description="Keywords", decided_by=DecidedBy.CODE
)
class OutageExpenseReplyInterpreter(KeywordReplyInterpreter): ...


REFUND_ROLE, EXPENSE_ROLE = desk_roles(
    refund_answered_by=PauseAnswerer.CHANNEL,
    refund_description="Approves card refunds",
    interpreters=(OutageRefundReplyInterpreter, OutageExpenseReplyInterpreter),
    prefix="Outage",
)


@tool(
    name=URGENT_TOOL,
    description="Refunds a card, if approved soon",
    input=RefundCardInput,
    output=Done,
    channel=REFUND_ROLE,
    timing=PauseTiming(expire_after=expire_after(), on_expiry=OnExpiry.FAIL),
)
class UrgentRefundTool:
    def run(self, input: RefundCardInput) -> Done:
        return Done(status=f"refunded {input.amount:.2f} at once on order {input.order_id}")


class ExpiringDeskModel(OfflineDemoModel):
    """The desk's offline model; an urgent request gets the urgent refund and the expense."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        asked = " ".join(str(m.content) for m in messages if isinstance(m, HumanMessage))
        first_turn = not any(isinstance(m, ToolMessage) for m in messages)
        if URGENT in asked and first_turn:
            calls = [
                {
                    "name": URGENT_TOOL,
                    "args": {"order_id": "A-9001", "amount": 40.0},
                    "id": "urgent-call-1",
                    "type": "tool_call",
                },
                {
                    "name": "book-expense-tool",
                    "args": dict(EXPENSE_CALL),
                    "id": "urgent-call-2",
                    "type": "tool_call",
                },
            ]
            message = AIMessage(content="", tool_calls=calls)
        else:
            message = next_message(messages)
        return ChatResult(generations=[ChatGeneration(message=message)])


REFUND_TOOL_CLASS, EXPENSE_TOOL_CLASS = desk_tools(REFUND_ROLE, EXPENSE_ROLE)


@agent(
    name="outage-desk-agent",
    description="Refunds cards (some urgently) and books expenses",
    prompt=DESK_PROMPT,
    model=ExpiringDeskModel(),
    tools=[REFUND_TOOL_CLASS, EXPENSE_TOOL_CLASS, UrgentRefundTool],
)
class OutageDeskAgent: ...


@workflow(
    name="outage-desk-workflow",
    version="1.0.0",
    flow=[
        start(DeskStart).returns(WorkflowStartText).to_agent(OutageDeskAgent).to_finish(DeskFinish)
    ],
)
class OutageDeskWorkflow: ...


@application(
    name="outage-expiring-desk",
    workflows=[OutageDeskWorkflow],
    entry_workflow=OutageDeskWorkflow,
    channels=[
        slack_channel(
            REFUND_ROLE,
            name="slack-outage-refund-approval-channel",
            conversation=DESK,
            approvers=(MANAGER,),
        ),
        slack_channel(
            EXPENSE_ROLE, name="slack-outage-expense-approval-channel", conversation=DESK
        ),
    ],
)
class ExpiringDesk: ...
