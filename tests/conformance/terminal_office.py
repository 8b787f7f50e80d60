"""An office asking in the terminal (``channels.terminal``): the person at the prompt owns the
thread and answers every question.

* refunds: a THREAD_OWNER role whose rejections need a reason; replies read by the keyword
  interpreter; the customer's e-mail is ``Sensitive``;
* payouts: a THREAD_OWNER role with time on it: reminded at 1 h and every 2 h, expired at
  24 h (nobody to escalate to).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from pydantic import BaseModel, Field

from bot import (
    ChannelOf,
    DecidedBy,
    PauseAnswerer,
    PauseTiming,
    Sensitive,
    channel,
    channel_role,
    reply_interpreter,
    tool,
)
from channels.terminal import TerminalOutput, TerminalUserChannel
from interpreters import KeywordReplyInterpreter
from tests.apps import sample_agent, sample_application
from tests.office import Done, Ledger

YOU = "you"
SECRET_EMAIL = "carol.secret@example.com"
HOUR = timedelta(hours=1)


class RefundCardInput(BaseModel):
    order_id: str = Field(title="Order ID")
    amount: float = Field(gt=0)
    email: Annotated[str, Sensitive()] = SECRET_EMAIL


class PayoutInput(BaseModel):
    payee: str
    amount: float


@reply_interpreter(
    name="terminal-refund-reply-interpreter",
    description="Reads approve / reject in a reply",
    decided_by=DecidedBy.CODE,
)
class RefundReplies(KeywordReplyInterpreter): ...


@channel_role(
    name="refund-approval-channel",
    description="The person at the terminal approves card refunds",
    approves=RefundCardInput,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=RefundReplies,
    reject_reason="required",
)
class RefundApprovalChannel(ChannelOf): ...


@channel_role(
    name="payout-approval-channel",
    description="The person at the terminal approves payouts, in time",
    approves=PayoutInput,
    answered_by=PauseAnswerer.THREAD_OWNER,
    timing=PauseTiming(remind_after=HOUR, remind_every=2 * HOUR, expire_after=24 * HOUR),
)
class PayoutApprovalChannel(ChannelOf): ...


@channel(
    name="terminal-refund-approval-channel",
    description="Asks at the terminal",
    deps=[TerminalOutput],
)
class TerminalRefundChannel(RefundApprovalChannel, TerminalUserChannel): ...


@channel(
    name="terminal-payout-approval-channel",
    description="Asks at the terminal",
    deps=[TerminalOutput],
)
class TerminalPayoutChannel(PayoutApprovalChannel, TerminalUserChannel): ...


@tool(
    name="refund-card-tool",
    description="Refunds a card",
    input=RefundCardInput,
    output=Done,
    channel=RefundApprovalChannel,
    deps=[Ledger],
)
class RefundCardTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: RefundCardInput) -> Done:
        self.ledger.runs.append(("refund", input.model_dump()))
        return Done(status=f"refunded {input.amount} on order {input.order_id}")


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

    def run(self, input: PayoutInput) -> Any:
        self.ledger.runs.append(("payout", input.model_dump()))
        return Done(status=f"paid {input.amount} to {input.payee}")


TerminalOfficeAgent = sample_agent(
    "terminal-office", tools=[RefundCardTool, PayOutTool], description="Refunds, pays out"
)
TERMINAL_OFFICE = sample_application(
    "terminal-office",
    agent=TerminalOfficeAgent,
    channels=[TerminalRefundChannel, TerminalPayoutChannel],
)
TerminalOfficeWorkflow = TERMINAL_OFFICE.workflow
TerminalOfficeApplication = TERMINAL_OFFICE.application
