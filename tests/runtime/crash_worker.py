"""A process killed with SIGKILL in the middle of its work; another instance recovers it.

Run: python -m tests.runtime.crash_worker DATABASE_URL COUNT [MODE]. MODE ``answers`` (the
default): it records COUNT answers (phase 1), prints "recorded N" and dies before any pass takes
them. MODE ``tool``: it answers one pause and dies inside the approved tool, after its pass took
the answer (prints "in the tool"). MODE ``decided``: its channel approves at once and it dies
inside the tool (prints "in the tool"). MODE ``after-tool``: it answers one pause, its tool
returns, and it dies in the model's next turn (prints "after the tool"), before the pass's last
write. All run on a ``FakeClock``, so the survivor can move past
the dead instance's lease (``CRASH_WORKER_CLOCK=system``: the system clock, for timing).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from bot import (
    Answered,
    App,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ExecutionContext,
    PauseAnswerer,
    Settings,
    SystemClock,
    WorkflowStartText,
    agent,
    application,
    channel,
    channel_role,
    start,
    tool,
    workflow,
)
from bot.testing import FakeClock
from tests.apps import OfficeFinish, OfficeStart
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.parallel_app import RuleModel


class ShipInput(BaseModel):
    order_id: str


class Ledger:
    def __init__(self, *, die_in_tool: bool = False) -> None:
        self.done: list[str] = []
        self.die_in_tool = die_in_tool


class Outbox:
    """Where the crash channel keeps the pause ids it was sent (this process only)."""

    def __init__(self, *, decide: bool = False) -> None:
        self.pause_ids: list[str] = []
        self.decide = decide


@channel_role(
    name="ship-approval-channel",
    description="Approves shipments",
    approves=ShipInput,
    answered_by=PauseAnswerer.CHANNEL,
)
class ShipApprovalChannel(ChannelOf): ...


@channel(name="outbox-ship-approval-channel", description="Keeps pause ids", deps=[Outbox])
class OutboxChannel(ShipApprovalChannel):
    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox

    async def send(self, ask: ChannelAsk) -> Any:
        self.outbox.pause_ids.append(ask.pause_id)
        if self.outbox.decide:
            return ChannelOutcome.decided({"approved": True})
        return ChannelOutcome.await_reply()


@tool(
    name="ship-order-tool",
    description="Ships",
    input=ShipInput,
    channel=ShipApprovalChannel,
    deps=[Ledger, ExecutionContext],
)
class ShipOrderTool:
    def __init__(self, ledger: Ledger, context: ExecutionContext) -> None:
        self.ledger = ledger
        self.context = context

    def run(self, input: ShipInput) -> str:
        self.ledger.done.append(input.order_id)
        if self.ledger.die_in_tool:
            print(f"in the tool ({self.context.root_execution_id})", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        return f"shipped {input.order_id}"


SEEN: list[str] = []
"""What the model read of each tool call, in this process."""
DIE_AFTER_TOOL: list[bool] = []
"""Set in the worker of MODE ``after-tool``."""


def _rule(messages: list[BaseMessage]) -> AIMessage:
    if any(isinstance(m, ToolMessage) for m in messages):
        SEEN.extend(str(m.content) for m in messages if isinstance(m, ToolMessage))
        if DIE_AFTER_TOOL:
            print("after the tool", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        return AIMessage(content="ok")
    request = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
    call = {"name": "ship-order-tool", "args": {"order_id": request}, "id": f"c-{request}"}
    return AIMessage(content="", tool_calls=[call])


@agent(
    name="ship-agent",
    description="Ships",
    prompt="p",
    model=RuleModel(_rule, "ship"),
    tools=[ShipOrderTool],
)
class ShipAgent: ...


@workflow(
    name="ship-workflow",
    version="1",
    flow=[
        start(OfficeStart).returns(WorkflowStartText).to_agent(ShipAgent).to_finish(OfficeFinish)
    ],
)
class ShipWorkflow: ...


@application(name="crash", workflows=[ShipWorkflow], channels=[OutboxChannel])
class CrashApplication: ...


async def main(url: str, count: int, mode: str) -> None:
    outbox = Outbox(decide=mode == "decided")
    if mode == "after-tool":
        DIE_AFTER_TOOL.append(True)
    app = await App.create(
        CrashApplication,
        database_url=url,
        clock=SystemClock() if os.environ.get("CRASH_WORKER_CLOCK") == "system" else FakeClock(),
        settings=Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS),
        services={Outbox: outbox, Ledger: Ledger(die_in_tool=mode in ("tool", "decided"))},
    )
    for i in range(count):
        paused = await app.execute(
            ShipWorkflow, WorkflowStartText(text=f"order-{i}"), tenant_id="acme", owner_id="U1"
        )
        print(f"execution {paused.execution_id}", flush=True)
    if mode in ("tool", "after-tool"):
        await app.resume(
            outbox.pause_ids[0], decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
        raise AssertionError("the run should have killed this process")

    for pause_id in outbox.pause_ids:  # phase 1 only: the process dies before phase 2
        recorded = await app.answer(
            pause_id, tenant_id="acme", by="m", decision={"approved": True}, continue_run=False
        )
        assert isinstance(recorded, Answered), recorded
    print(f"recorded {len(outbox.pause_ids)}", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


async def survivor(url: str, ledger: Ledger, clock: FakeClock) -> App:
    """Another instance on ``url``, recovering what a killed worker left; on its own clock,
    where the dead instance's lease is live until the clock moves past it."""
    return await App.create(
        CrashApplication,
        database_url=url,
        clock=clock,
        settings=Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS),
        services={Ledger: ledger},
    )


ROOT = Path(__file__).resolve().parents[2]


def run_until_killed(url: str, count: int, mode: str = "", *, system_clock: bool = False) -> str:
    """Run this worker in a process of its own until it SIGKILLs itself; its standard output
    (blocks: the worker must be dead before a survivor starts)."""
    clock = {"CRASH_WORKER_CLOCK": "system"} if system_clock else {}
    worker = subprocess.run(
        [sys.executable, "-m", "tests.runtime.crash_worker", url, str(count), mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), **clock},
        check=False,
    )
    if worker.returncode != -signal.SIGKILL:
        raise AssertionError(f"the worker did not die as planned: {worker.stderr[-3000:]}")
    return worker.stdout


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else ""))
