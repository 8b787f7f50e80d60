"""A Countersign application with one approval role, and LangChain agents to attach to it.

The agents are LangChain's own ``create_agent`` with ``HumanInTheLoopMiddleware`` over a tool
that counts its runs, driven by a scripted chat model (no network).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain.agents.middleware.human_in_the_loop import DecisionType, InterruptOnConfig
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from bot import (
    AwaitReply,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    Decided,
    DecidedBy,
    PauseAnswerer,
    channel,
    channel_role,
    reply_interpreter,
)
from bot.testing.llm import ScriptedChatModel
from interpreters import KeywordReplyInterpreter
from tests.apps import sample_agent, sample_application


class Outbox:
    """Where the channel posts: the questions asked, in order."""

    def __init__(self) -> None:
        self.asks: list[ChannelAsk] = []
        self.decide: dict[str, Any] | None = None
        """A decision the channel gives at once instead of waiting, when set."""

    @property
    def pause_ids(self) -> list[str]:
        return [a.pause_id for a in self.asks]


CUSTOMER_EMAIL = "customer@example.com"


class RefundCall(BaseModel):
    """What the refund role approves: the refund tool's arguments (an attached graph's
    questions are shown, and their edits checked, by the role's model, so it fits the tool's
    arguments: the same names, of compatible types)."""

    order_id: str
    amount: float
    email: str = CUSTOMER_EMAIL


@reply_interpreter(
    name="refund-approval-reply-interpreter", description="keywords", decided_by=DecidedBy.CODE
)
class RefundReplies(KeywordReplyInterpreter): ...


@channel_role(
    name="refund-approval-channel",
    description="A manager approves refunds",
    approves=RefundCall,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=RefundReplies,
)
class RefundApproval(ChannelOf): ...


@channel(name="outbox-refund-approval-channel", description="Keeps the question", deps=[Outbox])
class OutboxRefundApproval(RefundApproval):
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    async def send(self, ask: ChannelAsk) -> AwaitReply | Decided:
        self.outbox.asks.append(ask)
        if self.outbox.decide is not None:
            return ChannelOutcome.decided(self.outbox.decide)
        return ChannelOutcome.await_reply()


OFFICE = sample_application(
    "langgraph-office",
    agent=sample_agent(
        "idle", tools=[], description="Not used here", model=ScriptedChatModel(component="idle")
    ),
    channels=[OutboxRefundApproval],
)


@dataclass
class Refunds:
    """The tool's side: every run, with its arguments."""

    runs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def by_order(self) -> list[dict[str, Any]]:
        """The runs by order id: the calls of one model turn run side by side, in any order."""
        return sorted(self.runs, key=lambda run: str(run["order_id"]))

    def tool(self) -> BaseTool:
        @tool
        def refund(order_id: str, amount: float, email: str = CUSTOMER_EMAIL) -> str:
            """Refund an order's card payment (its receipt to ``email``)."""
            self.runs.append({"order_id": order_id, "amount": amount})
            return f"refunded {amount:.2f} on order {order_id}"

        return refund


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> AIMessage:
    """A model turn asking for ``calls`` (name, args), ids ``call-0``, ``call-1``, ..."""
    return AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": args, "id": f"call-{i}", "type": "tool_call"}
            for i, (name, args) in enumerate(calls)
        ],
    )


def refund_agent(
    model: ScriptedChatModel,
    refunds: Refunds,
    *,
    mode: Literal["batched", "per_call"] = "batched",
    allowed: Sequence[str] = ("approve", "edit", "reject"),
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> Any:
    """LangChain's agent over the refund tool, every refund asked for approval."""
    return approval_agent(
        model,
        [refunds.tool()],
        asks_about="refund",
        mode=mode,
        allowed=allowed,
        checkpointer=checkpointer,
        description="Refund?",
    )


def approval_agent(
    model: ScriptedChatModel,
    tools: Sequence[BaseTool],
    *,
    asks_about: str,
    mode: Literal["batched", "per_call"] = "batched",
    allowed: Sequence[str] = ("approve", "edit", "reject"),
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    description: str = "Go ahead?",
) -> Any:
    """LangChain's ``create_agent`` over ``tools``, its ``HumanInTheLoopMiddleware`` asking
    about every call of the tool named ``asks_about``, taking ``allowed``."""
    config: InterruptOnConfig = {
        "allowed_decisions": [cast(DecisionType, kind) for kind in allowed],
        "description": description,
    }
    middleware: HumanInTheLoopMiddleware[Any, Any, Any] = HumanInTheLoopMiddleware(
        interrupt_on={asks_about: config}, interrupt_mode=mode
    )
    return create_agent(
        model,
        tools=list(tools),
        middleware=[middleware],
        checkpointer=checkpointer or InMemorySaver(),
    )


class WireArgs(BaseModel):
    """The wire tool's own arguments: any account (no rule on its length), at most 10 000."""

    iban: str
    amount: float = Field(le=10_000)


@dataclass
class Wires:
    """A LangChain wire tool (its schema ``WireArgs``), and every run of it."""

    runs: list[dict[str, Any]] = field(default_factory=list)

    def tool(self, name: str = "wire") -> BaseTool:
        """The tool, named ``name`` (a name another graph's tool, or one of ours, has too)."""

        @tool(name, args_schema=WireArgs)
        def wire(iban: str, amount: float) -> str:
            """Wire money to an account."""
            self.runs.append({"iban": iban, "amount": amount})
            return f"wired {amount:.2f} to {iban}"

        return wire


def wire_agent(
    model: ScriptedChatModel,
    wires: Wires,
    *,
    name: str = "wire",
    allowed: Sequence[str] = ("approve", "edit", "reject"),
) -> Any:
    """LangChain's agent over the wire tool (named ``name``), every wire asked for approval."""
    return approval_agent(
        model, [wires.tool(name)], asks_about=name, allowed=allowed, description="Wire it?"
    )


def one_wire(
    iban: str = "DE0012345", amount: float = 500, *, name: str = "wire"
) -> ScriptedChatModel:
    """A model that asks for one wire (of the tool named ``name``), then says it is done."""
    return ScriptedChatModel(component="wire").then_return(
        tool_calls((name, {"iban": iban, "amount": amount})), "Done."
    )


def tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def contents_of_tool_messages(model: ScriptedChatModel) -> list[str]:
    """What the model read back from the tools, on its last call."""
    return [str(m.content) for m in tool_messages(model.calls[-1].messages)]


def one_refund() -> ScriptedChatModel:
    """A model that asks for one refund, then says it is done."""
    return ScriptedChatModel(component="refund").then_return(
        tool_calls(("refund", {"order_id": "7", "amount": 40})), "Done."
    )
