"""An attached LangChain agent whose approved tool is running when its process is SIGKILLed.

Run: python -m tests.langgraph.crash_worker DATABASE_URL CHECKPOINTS SIDE_EFFECTS. It attaches
``create_agent`` with ``HumanInTheLoopMiddleware`` (its checkpoints in the SQLite file
CHECKPOINTS) to an App on DATABASE_URL, asks for one refund, approves it, and dies inside the
refund tool right after the tool appended its line to SIDE_EFFECTS (it prints "execution
<execution id>" first). On a ``FakeClock``, so a survivor can move past the dead instance's lease.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from bot import App, Settings
from bot.testing import FakeClock
from bot.testing.llm import ScriptedChatModel
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.langgraph.kit import CUSTOMER_EMAIL, OFFICE, Outbox, RefundApproval, tool_calls

ASK = {"messages": [{"role": "user", "content": "refund order 7"}]}
ROOT = Path(__file__).resolve().parents[2]


def refund_tool(side_effects: Path, *, die: bool) -> BaseTool:
    @tool
    def refund(order_id: str, amount: float, email: str = CUSTOMER_EMAIL) -> str:
        """Refund an order's card payment (its receipt to ``email``)."""
        with side_effects.open("a") as file:  # the side effect: one line per run
            file.write(f"refunded {amount:.2f} on order {order_id}\n")
        if die:
            os.kill(os.getpid(), signal.SIGKILL)
        return f"refunded {amount:.2f} on order {order_id}"

    return refund


@asynccontextmanager
async def refund_agent(
    model: ScriptedChatModel, checkpoints: Path, side_effects: Path, *, die: bool
) -> AsyncIterator[Any]:
    """LangChain's agent over the refund tool, every refund asked for approval."""
    async with AsyncSqliteSaver.from_conn_string(str(checkpoints)) as saver:
        yield create_agent(
            model,
            tools=[refund_tool(side_effects, die=die)],
            middleware=[HumanInTheLoopMiddleware(interrupt_on={"refund": True})],
            checkpointer=saver,
        )


async def open_app(url: str, outbox: Outbox, clock: FakeClock) -> App:
    return await App.create(
        OFFICE.application,
        database_url=url,
        clock=clock,
        settings=Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS),
        services={Outbox: outbox},
    )


async def main(url: str, checkpoints: Path, side_effects: Path) -> None:
    model = ScriptedChatModel(component="refund").then_return(
        tool_calls(("refund", {"order_id": "7", "amount": 40})), "Done."
    )
    outbox = Outbox()
    async with refund_agent(model, checkpoints, side_effects, die=True) as graph:
        app = await open_app(url, outbox, FakeClock())
        agent = app.langgraph("refund-agent", graph, role=RefundApproval)
        paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
        print(f"execution {paused.execution_id}", flush=True)
        [pause_id] = outbox.pause_ids
        await app.resume(pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M1")
    raise AssertionError("the tool should have killed this process")


def run_until_killed(url: str, checkpoints: Path, side_effects: Path) -> str:
    """Run this worker in a process of its own until it is killed in the tool; its output."""
    worker = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.langgraph.crash_worker",
            url,
            str(checkpoints),
            str(side_effects),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    if worker.returncode != -signal.SIGKILL:
        raise AssertionError(f"the worker did not die as planned: {worker.stderr[-3000:]}")
    return worker.stdout


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
