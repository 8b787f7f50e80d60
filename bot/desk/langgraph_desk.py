"""Your own LangGraph agent, answered from the terminal: a runnable example.

LangChain's ``create_agent`` with ``HumanInTheLoopMiddleware`` is attached with ``App.langgraph``
to the terminal demo's application, under its refund role: the question is asked in the
terminal channel, so no Slack is needed. The model is the desk's offline model (scripted, no
network): it calls the refund and the expense tools at once, then sums up. The middleware asks
about the refund only; answer at the prompt (``approve``, ``reject: too expensive``)::

    echo approve | python -m bot.desk.langgraph_desk

The same agent answered from Slack: ``COUNTERSIGN_DESK_AGENT=langgraph python -m bot serve``
attaches it to the Slack desk's refund role (``attach_to_desk``), checkpointed in the App's own
database (``App.checkpointer``), and a mention or a DM invokes it on the Slack thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from bot import App, ExecutionResult, ExecutionStatus, SetupError, UninterpretableReplyError
from bot.desk.demo import REQUEST, OfficeDeskApplication, RefundApprovalChannel
from bot.desk.office import EXPENSE_TOOL, REFUND_ROLE, REFUND_TOOL, Done
from bot.desk.offline_model import OfflineDemoModel
from bot.langgraph import LangGraphAgent
from channels.terminal import TerminalOutput

TENANT_ID = "desk"
OWNER_ID = "you"


def desk_tools() -> list[BaseTool]:
    """The tools the offline model calls, as LangChain tools."""

    @tool(REFUND_TOOL)
    def refund_card(order_id: str, amount: float) -> str:
        """Refund an order's card payment."""
        return Done(status=f"refunded {amount:.2f} on order {order_id}").model_dump_json()

    @tool(EXPENSE_TOOL)
    def book_expense(purpose: str, amount: float) -> str:
        """Book an expense."""
        return Done(status=f"booked {amount:.2f} for {purpose}").model_dump_json()

    return [refund_card, book_expense]


def desk_agent(
    model: BaseChatModel | None = None, checkpointer: BaseCheckpointSaver[Any] | None = None
) -> Any:
    """The agent: ``model`` (the offline model by default) over the two tools; refunds are
    asked for approval (the role approves refunds), expenses are booked without asking."""
    middleware = HumanInTheLoopMiddleware(
        interrupt_on={REFUND_TOOL: {"allowed_decisions": ["approve", "edit", "reject"]}},
        description_prefix="The desk agent asks to refund",
    )
    return create_agent(
        model or OfflineDemoModel(),
        tools=desk_tools(),
        middleware=[middleware],
        checkpointer=checkpointer or InMemorySaver(),
    )


def attach_to_desk(app: App, model: BaseChatModel) -> LangGraphAgent:
    """The agent attached to a desk App's refund role, checkpointed in the App's database."""
    role = next(
        (r for r, spec in app.assembly.roles.items() if spec.name == REFUND_ROLE),
        None,
    )
    if role is None:
        raise SetupError(f"{app!r} is not an office desk: it has no {REFUND_ROLE} role")
    return app.langgraph("desk-agent", desk_agent(model, app.checkpointer), role=role)


NextLine = Callable[[], Awaitable[str | None]]
"""The next answer typed or piped; ``None`` when there are no more."""


async def run(out: TextIO, next_line: NextLine) -> int:
    """Invoke the agent, answer its pauses with ``next_line``, print how it ended."""
    terminal = TerminalOutput(out)
    async with await App.create(
        OfficeDeskApplication,  # the terminal demo's application: its channels, its role
        database_url="sqlite+aiosqlite:///:memory:",
        services={TerminalOutput: terminal},
    ) as app:
        terminal.read_assembly(app)
        agent = app.langgraph("desk-agent", desk_agent(), role=RefundApprovalChannel)
        out.write(f"request: {REQUEST}\n")
        result = await agent.ainvoke(
            {"messages": [{"role": "user", "content": REQUEST}]},
            thread_id="desk-1",
            tenant_id=TENANT_ID,
            owner_id=OWNER_ID,
        )
        while result.status is ExecutionStatus.PAUSED:
            answered = await _answer_first(app, result, out, next_line)
            if answered is None:
                out.write("No more answers: the agent stays paused.\n")
                return 0
            result = answered
        said = result.output["messages"][-1]["content"] if isinstance(result.output, dict) else ""
        out.write(f"answer: {said}\n")
        return 0 if result.status is ExecutionStatus.COMPLETED else 1


async def _answer_first(
    app: App, result: ExecutionResult, out: TextIO, next_line: NextLine
) -> ExecutionResult | None:
    """Ask for the first waiting pause's answer until one is understood."""
    pause_id = result.pending[0].pause_id
    assert pause_id is not None  # THREAD_OWNER pauses are listed with their ids
    while True:
        out.write("> ")
        out.flush()
        reply = await next_line()
        if reply is None:
            return None
        if not reply:
            continue
        out.write(f"{reply}\n")
        try:
            return await app.resume(pause_id, reply=reply, tenant_id=TENANT_ID, owner_id=OWNER_ID)
        except UninterpretableReplyError:
            out.write("Not understood: write approve, or reject: <reason>.\n")


async def stdin_line() -> str | None:
    """A line of standard input, read by a daemon thread: no blocking read in the loop, and
    nothing left waiting on the terminal once the example ends."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        line = sys.stdin.readline()

        def settle() -> None:
            if not future.done():
                future.set_result(line)

        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle)

    threading.Thread(target=read, name="langgraph-desk-input", daemon=True).start()
    line = await future
    return line.strip() if line else None


if __name__ == "__main__":
    sys.exit(asyncio.run(run(sys.stdout, stdin_line)))
