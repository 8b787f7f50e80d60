"""A wire transfer that needs two finance approvers (``required_approvals=2``), for the tests of
several approvals on every path: the runtime, the store, Slack, the web page, attached graphs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bot import (
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    PauseAnswerer,
    channel,
    channel_role,
    reply_interpreter,
    tool,
)
from interpreters import KeywordReplyInterpreter
from tests.apps import sample_agent, sample_application
from tests.office import Inbox, Ledger

REQUESTER = "U0REQUEST"
ANN, BOB, CID = "U0ANN", "U0BOB", "U0CID"
WIRE = {"account": "DE-1", "amount": 25000.0}


class WireInput(BaseModel):
    account: str
    amount: float


@reply_interpreter(
    name="wire-reply-interpreter", description="approve / reject", decided_by=DecidedBy.CODE
)
class WireReplyInterpreter(KeywordReplyInterpreter): ...


@channel_role(
    name="wire-approval-channel",
    description="Two finance approvers approve wires",
    approves=WireInput,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=WireReplyInterpreter,
    required_approvals=2,
)
class WireApprovalChannel(ChannelOf): ...


@channel(name="inbox-wire-approval-channel", description="Records", deps=[Inbox])
class InboxWireChannel(WireApprovalChannel):
    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox

    async def send(self, ask: ChannelAsk) -> Any:
        self.inbox.asks.append(ask)
        return ChannelOutcome.await_reply()


@tool(
    name="wire-tool",
    description="Sends a wire transfer",
    input=WireInput,
    channel=WireApprovalChannel,
    deps=[Ledger],
)
class WireTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: WireInput) -> str:
        self.ledger.runs.append(("wire", input.model_dump()))
        return "sent"


WireAgent = sample_agent("wire", tools=[WireTool], description="Wires", prompt="p", model="offline")
WIRES = sample_application(
    "wires-four-eyes",
    agent=WireAgent,
    channels=[InboxWireChannel],
    workflow_name="wire-workflow",
    version="1",
)
WireWorkflow = WIRES.workflow
WireApplication = WIRES.application
