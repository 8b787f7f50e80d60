"""Resume throughput: our full path against bare LangGraph, same one-tool workflow, same saver.

    python -m tests.benchmarks.resume_throughput [--cycles 200] [--concurrency 50]
        [--database sqlite|postgres]

A cycle is: start the workflow until it pauses for approval, then answer it until it finishes.
Ours: ``app.execute`` → pause record + channel send → ``app.resume`` (phase 1, lease, pass,
tool, final answer). Bare: the same graph shape (model → tool with ``interrupt()`` → model) on
LangGraph's saver, resumed with ``Command(resume={id: value})``. Both on a SQLite file in a
temporary folder (AsyncSqliteSaver), or both on a fresh PostgreSQL database each (the local
server; AsyncPostgresSaver on a psycopg pool configured as ours), with the same offline model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

import aiosqlite
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel

from bot import (
    App,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    PauseAnswerer,
    Settings,
    WorkflowStartText,
    agent,
    application,
    channel,
    channel_role,
    start,
    tool,
    workflow,
)
from bot.runtime.checkpoints import PSYCOPG_OPTIONS
from bot.store.database import DatabaseUrl
from bot.testing import FakeClock
from tests.apps import OfficeFinish, OfficeStart
from tests.databases import TEST_ENCRYPTION_KEYS, postgres_database
from tests.parallel_app import RuleModel


class PayInput(BaseModel):
    invoice: str


class Inbox:
    def __init__(self) -> None:
        self.pending: dict[str, str] = {}


def rule(messages: list[BaseMessage]) -> AIMessage:
    if any(isinstance(m, ToolMessage) for m in messages):
        return AIMessage(content="paid")
    request = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
    call = {"name": "pay-invoice-tool", "args": {"invoice": request}, "id": f"c-{request}"}
    return AIMessage(content="", tool_calls=[call])


MODEL = RuleModel(rule, "bench", delay=0.0, records_calls=False)


@channel_role(
    name="pay-approval-channel",
    description="d",
    approves=PayInput,
    answered_by=PauseAnswerer.CHANNEL,
)
class PayApproval(ChannelOf): ...


@channel(name="inbox-pay-approval-channel", description="d", deps=[Inbox])
class InboxChannel(PayApproval):
    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox

    async def send(self, ask: ChannelAsk) -> Any:
        self.inbox.pending[ask.value.arguments["invoice"]] = ask.pause_id
        return ChannelOutcome.await_reply()


@tool(name="pay-invoice-tool", description="Pays", input=PayInput, channel=PayApproval)
class PayInvoiceTool:
    def run(self, input: PayInput) -> str:
        return f"paid {input.invoice}"


@agent(name="pay-agent", description="Pays", prompt="Pay.", model=MODEL, tools=[PayInvoiceTool])
class PayAgent: ...


@workflow(
    name="pay-workflow",
    version="1",
    flow=[start(OfficeStart).returns(WorkflowStartText).to_agent(PayAgent).to_finish(OfficeFinish)],
)
class PayWorkflow: ...


@application(name="bench", workflows=[PayWorkflow], channels=[InboxChannel])
class BenchApplication: ...


# ---------------------------------------------------------------- bare LangGraph


class BareState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def bare_graph(saver: BaseCheckpointSaver[Any]) -> Any:
    async def model(state: BareState) -> dict[str, Any]:
        return {"messages": [await MODEL.ainvoke(state["messages"])]}

    async def pay(state: BareState) -> dict[str, Any]:
        call = state["messages"][-1].tool_calls[0]  # type: ignore[union-attr]
        answer = interrupt({"tool": call["name"], "args": call["args"]})
        content = f"paid {call['args']['invoice']}" if answer["approved"] else "rejected"
        return {"messages": [ToolMessage(content=content, tool_call_id=call["id"])]}

    def route(state: BareState) -> str:
        last = state["messages"][-1]
        return "pay" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(BareState)
    graph.add_node("model", model)
    graph.add_node("pay", pay)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["pay", END])
    graph.add_edge("pay", "model")
    return graph.compile(checkpointer=saver)


# ---------------------------------------------------------------- measuring


async def measure(
    cycle: Callable[[int], Awaitable[None]], cycles: int, concurrency: int
) -> dict[str, float]:
    for i in range(10):  # warm up
        await cycle(-1 - i)
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(i: int) -> None:
        async with gate:
            began = time.perf_counter()
            await cycle(i)
            latencies.append(time.perf_counter() - began)

    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(cycles)))
    elapsed = time.perf_counter() - began
    latencies.sort()
    return {
        "cycles_per_s": cycles / elapsed,
        "ms_per_cycle": elapsed / cycles * 1000,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
    }


async def ours(url: str, cycles: int, concurrency: int) -> dict[str, float]:
    inbox = Inbox()
    async with await App.create(
        BenchApplication,
        database_url=url,
        clock=FakeClock(),
        settings=Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS),
        services={Inbox: inbox},
    ) as app:
        run_id = uuid.uuid4().hex[:6]

        async def cycle(i: int) -> None:
            invoice = f"{run_id}-{i}"
            await app.execute(
                PayWorkflow, WorkflowStartText(text=invoice), tenant_id="t", owner_id="o"
            )
            pause_id = inbox.pending.pop(invoice)
            done = await app.resume(
                pause_id, decision={"approved": True}, tenant_id="t", answered_by="m"
            )
            assert done.output == {"text": "paid"}, done

        return await measure(cycle, cycles, concurrency)


@contextlib.asynccontextmanager
async def sqlite_saver(folder: Path) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    connection = await aiosqlite.connect(str(folder / "bare.db"))
    try:
        saver = AsyncSqliteSaver(connection)
        await saver.setup()
        yield saver
    finally:
        await connection.close()


@contextlib.asynccontextmanager
async def postgres_saver(url: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        "",
        min_size=1,
        max_size=10,
        open=False,
        kwargs={
            **DatabaseUrl.parse(url).libpq_parameters(),
            **PSYCOPG_OPTIONS,
            "row_factory": dict_row,
        },
    )
    await pool.open(wait=True)
    try:
        saver = AsyncPostgresSaver(pool)
        await saver.setup()
        yield saver
    finally:
        await pool.close()


async def bare(saver: BaseCheckpointSaver[Any], cycles: int, concurrency: int) -> dict[str, float]:
    return await measure(bare_cycle(saver), cycles, concurrency)


def bare_cycle(saver: BaseCheckpointSaver[Any]) -> Callable[[int], Awaitable[None]]:
    """One cycle of the bare graph on ``saver``: run to the interrupt, resume to the end."""
    graph = bare_graph(saver)

    async def cycle(i: int) -> None:
        config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
        paused = await graph.ainvoke(
            {"messages": [HumanMessage(content=str(i))]},
            config,
            durability="sync",
            version="v2",
        )
        [pending] = paused.interrupts
        done = await graph.ainvoke(
            Command(resume={pending.id: {"approved": True}}), config, durability="sync"
        )
        assert done["messages"][-1].content == "paid"

    return cycle


def show(name: str, figures: dict[str, float]) -> None:
    print(
        f"  {name:<6} {figures['cycles_per_s']:7.1f} cycles/s"
        f"  {figures['ms_per_cycle']:6.1f} ms/cycle"
        f"  p50 {figures['p50_ms']:7.1f} ms  p99 {figures['p99_ms']:7.1f} ms"
    )


async def run_both(database: str, cycles: int, level: int) -> tuple[dict[str, float], ...]:
    if database == "postgres":
        async with postgres_database() as mine_url, postgres_database() as bare_url:
            mine = await ours(mine_url, cycles, level)
            async with postgres_saver(bare_url) as saver:
                return mine, await bare(saver, cycles, level)
    with tempfile.TemporaryDirectory() as folder:
        mine = await ours(f"sqlite+aiosqlite:///{Path(folder) / 'ours.db'}", cycles, level)
        async with sqlite_saver(Path(folder)) as saver:
            return mine, await bare(saver, cycles, level)


async def main(cycles: int, concurrency: int, database: str) -> None:
    where = "SQLite file" if database == "sqlite" else "PostgreSQL"
    for label, level in (("sequential", 1), (f"{concurrency} concurrent", concurrency)):
        mine, theirs = await run_both(database, cycles, level)
        print(f"{label} ({cycles} cycles, {where}, durability=sync):")
        show("ours", mine)
        show("bare", theirs)
        ratio = theirs["cycles_per_s"] / mine["cycles_per_s"]
        print(f"  ratio: our cycle costs {ratio:.2f}x the bare LangGraph cycle (target <= 2x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.cycles, arguments.concurrency, arguments.database))
