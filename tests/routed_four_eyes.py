"""A wire whose role needs one approver and offers standing grants, and whose policy routes
wires of 10,000 or more to two approvers (``PolicyOutcome.route(required_approvals=2)``): for
the tests of a routed count on every path (Slack, the web page)."""

from __future__ import annotations

from typing import Final

from bot import (
    ChannelOf,
    DecidedBy,
    PauseAnswerer,
    PolicyAsk,
    PolicyDecision,
    PolicyOutcome,
    channel_role,
    policy,
    reply_interpreter,
    tool,
)
from interpreters import KeywordReplyInterpreter
from tests.apps import sample_agent
from tests.four_eyes import WireInput
from tests.office import Ledger

THRESHOLD: Final = 10_000
BIG_WIRE: Final = {"account": "DE-1", "amount": 25000.0}
SMALL_WIRE: Final = {"account": "DE-1", "amount": 900.0}


@policy(name="big-wire-policy", description="Wires of 10,000 or more need two approvers")
class BigWirePolicy:
    def decide(self, ask: PolicyAsk) -> PolicyDecision:
        if float(ask.arguments["amount"]) >= THRESHOLD:
            return PolicyOutcome.route(required_approvals=2, reason="10,000 or more")
        return PolicyOutcome.ask()


@reply_interpreter(
    name="routed-wire-reply-interpreter", description="approve / reject", decided_by=DecidedBy.CODE
)
class RoutedWireReplyInterpreter(KeywordReplyInterpreter): ...


@channel_role(
    name="routed-wire-approval-channel",
    description="Finance approves wires; big ones need two approvers",
    approves=WireInput,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=RoutedWireReplyInterpreter,
    grants=["thread", "requester", "agent"],
    policy=BigWirePolicy,
)
class RoutedWireApprovalChannel(ChannelOf): ...


@tool(
    name="routed-wire-tool",
    description="Sends a wire transfer",
    input=WireInput,
    channel=RoutedWireApprovalChannel,
    deps=[Ledger],
)
class RoutedWireTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: WireInput) -> str:
        self.ledger.runs.append(("wire", input.model_dump()))
        return "sent"


def routed_wire_agent(name: str) -> type:
    return sample_agent(name, tools=[RoutedWireTool], description="Wires money")
