"""An office application asking on the web: the roles are implemented with ``web_channel``.

* refunds: a CHANNEL role answered by ``ALICE`` or ``BOB``, rejected only with a reason
  (``reject_reason="required"``); replies read by the keyword interpreter; the customer's
  e-mail is sensitive;
* expenses: a THREAD_OWNER role: the requester (``OWNER``) answers;
* wires: a CHANNEL role answered by ``ALICE`` or ``OWNER``, with separation of duties and no
  reply interpreter (only the buttons answer it);
* payouts: a CHANNEL role with time on it (``PAYOUT_TIMING``: reminded at 1 h and every 2 h,
  escalated at 4 h, expired at 24 h), answered by ``BOB``, escalated to ``CAROL``.
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
from channels.web import web_channel
from tests.apps import sample_agent, sample_application
from tests.office import Done, Ledger, office_roles, recording_office_tools

ALICE = "alice@example.com"
BOB = "bob"
OWNER = "olga"
CAROL = "carol"  # the payouts' escalation approver
STRANGER = "mallory"
SECRET_EMAIL = "carol.secret@example.com"
TENANT = "acme"


class RefundCardInput(BaseModel):
    order_id: str = Field(title="Order ID")
    amount: float = Field(gt=0, description="How much to refund")
    email: Annotated[str, Sensitive()] = SECRET_EMAIL


class PayoutInput(BaseModel):
    payee: str
    amount: float


HOUR = timedelta(hours=1)
PAYOUT_TIMING = PauseTiming(
    remind_after=HOUR, remind_every=2 * HOUR, escalate_after=4 * HOUR, expire_after=24 * HOUR
)
HOURLY_PAYOUT_TIMING = PauseTiming(
    remind_after=HOUR, remind_every=HOUR, escalate_after=3 * HOUR, expire_after=24 * HOUR
)
"""Reminded every hour and escalated at 3 h: a reminder falls at the escalation's moment."""


RefundApprovalChannel, ExpenseApprovalChannel, WireApprovalChannel = office_roles(
    "web", refund_input=RefundCardInput, refund_reject_reason="required"
)


@channel_role(
    name="payout-approval-channel",
    description="A manager approves payouts, in time",
    approves=PayoutInput,
    answered_by=PauseAnswerer.CHANNEL,
    timing=PAYOUT_TIMING,
)
class PayoutApprovalChannel(ChannelOf): ...


WebRefundChannel = web_channel(
    RefundApprovalChannel, name="web-refund-approval-channel", approvers=[ALICE, BOB]
)
WebExpenseChannel = web_channel(ExpenseApprovalChannel, name="web-expense-approval-channel")
WebWireChannel = web_channel(
    WireApprovalChannel, name="web-wire-approval-channel", approvers=[ALICE, OWNER]
)

WebPayoutChannel = web_channel(
    PayoutApprovalChannel, name="web-payout-approval-channel", approvers=[BOB], escalate_to=[CAROL]
)


RefundCardTool, BookExpenseTool, WireMoneyTool = recording_office_tools(
    (RefundApprovalChannel, ExpenseApprovalChannel, WireApprovalChannel)
)


@tool(
    name="pay-out-tool",
    description="Pays a payee out",
    input=PayoutInput,
    output=Done,
    channel=PayoutApprovalChannel,
    deps=[Ledger],
)
class PayOutTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: PayoutInput) -> Done:
        self.ledger.runs.append(("payout", input.model_dump()))
        return Done(status=f"paid {input.amount} to {input.payee}")


@tool(
    name="pay-out-hourly-tool",
    description="Pays a payee out, reminded every hour",
    input=PayoutInput,
    output=Done,
    channel=PayoutApprovalChannel,
    timing=HOURLY_PAYOUT_TIMING,
    deps=[Ledger],
)
class HourlyPayOutTool(PayOutTool): ...


@channel_role(
    name="granted-payout-approval-channel",
    description="A manager approves payouts, and may allow similar ones",
    approves=PayoutInput,
    answered_by=PauseAnswerer.CHANNEL,
    grants=["thread", "requester", "agent"],
)
class GrantedPayoutApprovalChannel(ChannelOf): ...


WebGrantedPayoutChannel = web_channel(
    GrantedPayoutApprovalChannel, name="web-granted-payout-approval-channel", approvers=[BOB]
)


@tool(
    name="granted-pay-out-tool",
    description="Pays a payee out; a manager may allow similar payouts",
    input=PayoutInput,
    output=Done,
    channel=GrantedPayoutApprovalChannel,
    deps=[Ledger],
)
class GrantedPayOutTool(PayOutTool): ...


@policy(name="big-payout-route-policy", description="Payouts of 500 or more: Carol decides")
class BigPayoutRoute:
    def decide(self, ask: PolicyAsk) -> PolicyDecision:
        if float(ask.arguments["amount"]) >= 500:
            return PolicyOutcome.route(approvers=[CAROL], reason="500 or more")
        return PolicyOutcome.ask()


@tool(
    name="routed-pay-out-tool",
    description="Pays a payee out; big payouts are asked of Carol",
    input=PayoutInput,
    output=Done,
    channel=PayoutApprovalChannel,
    policy=BigPayoutRoute,
    deps=[Ledger],
)
class RoutedPayOutTool(PayOutTool): ...


WebOfficeAgent = sample_agent(
    "web-office",
    tools=[
        RefundCardTool,
        BookExpenseTool,
        WireMoneyTool,
        PayOutTool,
        HourlyPayOutTool,
        GrantedPayOutTool,
        RoutedPayOutTool,
    ],
    description="Refunds, books expenses, wires money, pays out",
)
WEB_OFFICE = sample_application(
    "web-office",
    agent=WebOfficeAgent,
    channels=[
        WebRefundChannel,
        WebExpenseChannel,
        WebWireChannel,
        WebPayoutChannel,
        WebGrantedPayoutChannel,
    ],
    entry_workflow=True,
)
WebOfficeWorkflow = WEB_OFFICE.workflow
WebOfficeApplication = WEB_OFFICE.application
