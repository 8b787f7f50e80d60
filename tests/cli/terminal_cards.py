"""A card desk in the terminal, run as a process: ``python -m tests.cli.terminal_cards native``
(our own agent's tool) or ``... graph`` (a LangChain agent attached with ``App.langgraph``), or
both one after the other (``... native graph``: each desk's output after a ``== <kind>`` line).

Its tool charges a card, and the card number is ``Sensitive``. The terminal channel asks at the
prompt; the answers come from standard input, read by the keyword interpreter; then the desk
prints what the demo prints (``bot.cli.terminal``): the pending question, the audit trail.
Nothing a person reads here may show the card number.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Any, Final

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import tool as langchain_tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from bot import (
    App,
    ChannelOf,
    DecidedBy,
    ExecutionResult,
    ExecutionStatus,
    PauseAnswerer,
    Sensitive,
    WorkflowStartText,
    channel,
    channel_role,
    reply_interpreter,
    tool,
)
from bot.cli.terminal import audit_line
from bot.testing import ScriptedChatModel, call_tool
from channels.terminal import TerminalOutput, TerminalUserChannel
from interpreters import KeywordReplyInterpreter
from tests.apps import sample_agent, sample_application
from tests.langgraph.kit import tool_calls

CARD_NUMBER: Final = "4111 1111 1111 1111"
CHARGE: Final = {"order_id": "A-1001", "card_number": CARD_NUMBER, "amount": 120.0}
TENANT, OWNER = "desk", "you"


class ChargeCardInput(BaseModel):
    order_id: str
    card_number: Annotated[str, Sensitive()]
    amount: float


class Charged(BaseModel):
    status: str


@reply_interpreter(
    name="card-keyword-reply-interpreter",
    description="Reads approve / reject in a reply",
    decided_by=DecidedBy.CODE,
)
class CardReplies(KeywordReplyInterpreter): ...


@channel_role(
    name="card-approval-channel",
    description="The person at the terminal approves card charges",
    approves=ChargeCardInput,
    answered_by=PauseAnswerer.THREAD_OWNER,
    reply_interpreter=CardReplies,
)
class CardApprovalChannel(ChannelOf): ...


@channel(
    name="terminal-card-approval-channel",
    description="Asks in the terminal",
    deps=[TerminalOutput],
)
class TerminalCardApprovalChannel(CardApprovalChannel, TerminalUserChannel): ...


@tool(
    name="charge-card-tool",
    description="Charges a card",
    input=ChargeCardInput,
    output=Charged,
    channel=CardApprovalChannel,
)
class ChargeCardTool:
    async def run(self, input: ChargeCardInput) -> Charged:
        return Charged(status=f"charged {input.amount:.2f} for order {input.order_id}")


CARDS = sample_application(
    "terminal-cards",
    agent=sample_agent(
        "terminal-cards",
        tools=[ChargeCardTool],
        description="Charges cards",
        model=ScriptedChatModel(component="terminal-cards").then_return(
            call_tool(ChargeCardTool, CHARGE), "charged"
        ),
    ),
    channels=[TerminalCardApprovalChannel],
)


def card_graph() -> Any:
    """LangChain's agent over a charge tool whose card number is ``Sensitive``; every charge
    is asked for approval."""

    @langchain_tool("charge_card")
    def charge_card(order_id: str, card_number: Annotated[str, Sensitive()], amount: float) -> str:
        """Charge a card for an order."""
        return f"charged {amount:.2f} for order {order_id}"

    model = ScriptedChatModel(component="card-graph").then_return(
        tool_calls(("charge_card", CHARGE)), "charged"
    )
    approval = HumanInTheLoopMiddleware(
        interrupt_on={"charge_card": {"allowed_decisions": ["approve", "reject"]}}
    )
    return create_agent(
        model, tools=[charge_card], middleware=[approval], checkpointer=InMemorySaver()
    )


async def main(kind: str) -> int:
    terminal = TerminalOutput(sys.stdout)
    async with await App.create(
        CARDS.application,
        database_url="sqlite+aiosqlite:///:memory:",
        services={TerminalOutput: terminal},
    ) as app:
        terminal.read_assembly(app)
        if kind == "graph":
            agent = app.langgraph("card-agent", card_graph(), role=CardApprovalChannel)
            result = await agent.ainvoke(
                {"messages": [{"role": "user", "content": "charge"}]},
                thread_id="cards-1",
                tenant_id=TENANT,
                owner_id=OWNER,
            )
        else:
            result = await app.execute(
                CARDS.workflow, WorkflowStartText(text="charge"), tenant_id=TENANT, owner_id=OWNER
            )
        while result.status is ExecutionStatus.PAUSED:
            result = await answer(app, result)
        record = await app.get_result(result.execution_id, tenant_id=TENANT, record=True)
        assert record.record is not None
        for entry in record.record.pauses:
            ran_with = json.dumps(entry.ran_with, ensure_ascii=False)
            print(f"audit: {audit_line(entry)} ran with {ran_with}")
        print(f"ended {result.status.value}")
        return 0


async def answer(app: App, result: ExecutionResult) -> ExecutionResult:
    """Print the first waiting question as the demo does, and answer it with the next line."""
    [pending] = await app.list_pending(tenant_id=TENANT, owner_id=OWNER)
    print(f"pending: {pending.ask.tool} {json.dumps(pending.ask.arguments, ensure_ascii=False)}")
    pause_id = result.pending[0].pause_id
    assert pause_id is not None  # a THREAD_OWNER pause is listed with its id
    reply = (await asyncio.to_thread(sys.stdin.readline)).strip()
    return await app.resume(pause_id, reply=reply, tenant_id=TENANT, owner_id=OWNER)


def main_of_each(kinds: list[str]) -> int:
    """Each kind's desk in turn (one process: its imports cost seconds)."""
    code = 0
    for kind in kinds:
        print(f"== {kind}", flush=True)
        code = asyncio.run(main(kind)) or code
    return code


if __name__ == "__main__":
    sys.exit(main_of_each(sys.argv[1:]))
