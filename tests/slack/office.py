"""An office application asking in Slack: the roles are implemented with ``slack_channel``.

* refunds: a CHANNEL role posted in ``APPROVALS``, answered by ``MANAGER`` or members of the
  user group ``FINANCE``, rejected only with a reason (``reject_reason="required"``); replies
  read by the keyword interpreter;
* expenses: a THREAD_OWNER role, posted in the owner's Slack thread; keyword interpreter;
* wires: a CHANNEL role with no reply interpreter (only the buttons answer it), with time on
  its questions (``WIRE_TIMING``): escalated to ``ONCALL`` with a copy in ``ESCALATIONS``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from bot import (
    PauseAnswerer,
    PauseTiming,
    PolicyAsk,
    PolicyDecision,
    PolicyOutcome,
    Sensitive,
    channel_role,
    policy,
    tool,
)
from bot.core.channel import ChannelOf
from channels.slack import slack_channel
from tests.apps import sample_agent, sample_application
from tests.office import Done, Ledger, WireInput, office_roles, recording_office_tools

APPROVALS = "C0APPROVALS"
MANAGER = "U0MANAGER"
FINANCE = "S0FINANCE"
ACCOUNTANT = "U0ACCOUNTANT"  # a member of FINANCE
OWNER = "U0OWNER"
STRANGER = "U0STRANGER"
ONCALL = "U0ONCALL"  # may answer a wire once it is escalated
ESCALATIONS = "C0ESCALATIONS"  # where an escalated wire is asked again
WIRE_TIMING = PauseTiming(
    remind_after=timedelta(hours=1),
    remind_every=timedelta(hours=2),
    escalate_after=timedelta(hours=4),
    expire_after=timedelta(hours=24),
)
HOURLY_WIRE_TIMING = PauseTiming(
    remind_after=timedelta(hours=1),
    remind_every=timedelta(hours=1),
    escalate_after=timedelta(hours=3),
    expire_after=timedelta(hours=24),
)
"""Reminded every hour and escalated at 3 h: a reminder falls at the escalation's moment."""
SECRET_EMAIL = "carol.secret@example.com"
HOUR = timedelta(hours=1)


class RefundCardInput(BaseModel):
    order_id: str
    amount: float = Field(gt=0)
    email: Annotated[str, Sensitive()] = SECRET_EMAIL


RefundApprovalChannel, ExpenseApprovalChannel, WireApprovalChannel = office_roles(
    "slack", refund_input=RefundCardInput, wire_timing=WIRE_TIMING, refund_reject_reason="required"
)


SlackRefundChannel = slack_channel(
    RefundApprovalChannel,
    name="slack-refund-approval-channel",
    conversation=APPROVALS,
    approvers=[MANAGER, FINANCE],
)
SlackExpenseChannel = slack_channel(
    ExpenseApprovalChannel, name="slack-expense-approval-channel", conversation=APPROVALS
)
SlackWireChannel = slack_channel(
    WireApprovalChannel,
    name="slack-wire-approval-channel",
    conversation=APPROVALS,
    approvers=[MANAGER, FINANCE],
    escalate_to=[ONCALL, ESCALATIONS],
)


RefundCardTool, BookExpenseTool, WireMoneyTool = recording_office_tools(
    (RefundApprovalChannel, ExpenseApprovalChannel, WireApprovalChannel)
)


@tool(
    name="wire-money-hourly-tool",
    description="Wires money, reminded every hour",
    input=WireInput,
    output=Done,
    channel=WireApprovalChannel,
    timing=HOURLY_WIRE_TIMING,
    deps=[Ledger],
)
class HourlyWireMoneyTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: WireInput) -> Done:
        self.ledger.runs.append(("wire", input.model_dump()))
        return Done(status=f"wired {input.amount}")


@policy(name="small-refund-policy", description="Refunds under 50 approve themselves")
class SmallRefundPolicy:
    def decide(self, ask: PolicyAsk) -> PolicyDecision:
        if float(ask.arguments["amount"]) < 50:
            return PolicyOutcome.approve("under 50.00")
        return PolicyOutcome.ask()


@tool(
    name="small-refund-card-tool",
    description="Refunds a card, small ones at once",
    input=RefundCardInput,
    output=Done,
    channel=RefundApprovalChannel,
    policy=SmallRefundPolicy,
    deps=[Ledger],
)
class SmallRefundCardTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: RefundCardInput) -> Done:
        self.ledger.runs.append(("small-refund", input.model_dump()))
        return Done(status=f"refunded {input.amount}")


@channel_role(
    name="granted-refund-approval-channel",
    description="A manager approves refunds, and may allow similar ones",
    approves=RefundCardInput,
    answered_by=PauseAnswerer.CHANNEL,
    grants=["thread", "requester", "agent"],
)
class GrantedRefundApprovalChannel(ChannelOf): ...


SlackGrantedRefundChannel = slack_channel(
    GrantedRefundApprovalChannel,
    name="slack-granted-refund-approval-channel",
    conversation=APPROVALS,
    approvers=[MANAGER, FINANCE],
)


@tool(
    name="granted-refund-card-tool",
    description="Refunds a card; a manager may allow similar refunds",
    input=RefundCardInput,
    output=Done,
    channel=GrantedRefundApprovalChannel,
    deps=[Ledger],
)
class GrantedRefundCardTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: RefundCardInput) -> Done:
        self.ledger.runs.append(("granted-refund", input.model_dump()))
        return Done(status=f"refunded {input.amount}")


BOSS = "U0BOSS"
BOSS_ROOM = "C0BOSSROOM"


@policy(name="big-refund-route-policy", description="Refunds of 500 or more: the boss, 1 h")
class BigRefundRoutePolicy:
    def decide(self, ask: PolicyAsk) -> PolicyDecision:
        if float(ask.arguments["amount"]) >= 500:
            return PolicyOutcome.route(
                approvers=[BOSS], conversation=BOSS_ROOM, timing=PauseTiming(expire_after=HOUR)
            )
        return PolicyOutcome.ask()


@tool(
    name="routed-refund-card-tool",
    description="Refunds a card; big ones are asked of the boss",
    input=RefundCardInput,
    output=Done,
    channel=RefundApprovalChannel,
    policy=BigRefundRoutePolicy,
    deps=[Ledger],
)
class RoutedRefundCardTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: RefundCardInput) -> Done:
        self.ledger.runs.append(("routed-refund", input.model_dump()))
        return Done(status=f"refunded {input.amount}")


SlackOfficeAgent = sample_agent(
    "slack-office",
    tools=[
        RefundCardTool,
        BookExpenseTool,
        WireMoneyTool,
        HourlyWireMoneyTool,
        SmallRefundCardTool,
        GrantedRefundCardTool,
        RoutedRefundCardTool,
    ],
    description="Refunds, books expenses, wires money",
)
SLACK_OFFICE = sample_application(
    "slack-office",
    agent=SlackOfficeAgent,
    channels=[
        SlackRefundChannel,
        SlackExpenseChannel,
        SlackWireChannel,
        SlackGrantedRefundChannel,
    ],
    entry_workflow=True,
)
SlackOfficeWorkflow = SLACK_OFFICE.workflow
SlackOfficeApplication = SLACK_OFFICE.application
