"""The lab's failure cases (shared/notes/langgraph-lab/REPORT.md), kept as regression tests."""

from __future__ import annotations

import asyncio
import operator
import random
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langgraph._internal._constants import CONFIG_KEY_SCRATCHPAD
from langgraph._internal._scratchpad import PregelScratchpad
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.errors import GraphInterrupt
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from packaging.requirements import Requirement

from bot import ExecutionStatus, NotPausedError
from bot.runtime.launch import invoke_pinned
from bot.testing import call_tool, mock_llm
from tests.conftest import MakeOffice
from tests.office import OfficeAgent, RefundCardTool
from tests.runtime.helpers import run

REPO = Path(__file__).resolve().parents[2]


def test_langgraph_is_in_the_range_the_runtime_was_measured_on() -> None:
    """The launch pins namespaces through LangGraph internals, measured at both ends of the
    declared range (tests/version_matrix.sh): the installed version lies in it."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    [langgraph] = [Requirement(d) for d in declared if Requirement(d).name == "langgraph"]
    assert langgraph.specifier.contains(version("langgraph"))
    assert CONFIG_KEY_SCRATCHPAD == "__pregel_scratchpad"
    assert "subgraph_counter" in PregelScratchpad.__dataclass_fields__


# ---- e4 / e5: concurrent subgraph calls must not swap checkpoint namespaces


class BranchState(TypedDict):
    name: str
    out: Annotated[list[str], operator.add]


def _branch_graph() -> Any:
    async def s1(state: BranchState) -> dict[str, Any]:
        return {"out": [f"s1({state['name']})"]}

    async def s2(state: BranchState) -> dict[str, Any]:
        answer = interrupt(f"approve {state['name']}")
        return {"out": [f"s2({state['name']})={answer}"]}

    graph = StateGraph(BranchState)
    graph.add_node("s1", s1)
    graph.add_node("s2", s2)
    graph.add_edge(START, "s1")
    graph.add_edge("s1", "s2")
    graph.add_edge("s2", END)
    return graph.compile()


class SlowCallback(AsyncCallbackHandler):
    """An async callback that awaits (as tracing does): it randomises when loops start."""

    async def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.sleep(random.random() / 500)


class BlockState(TypedDict, total=False):
    log: list[list[str]]


NAMES = ["A", "B", "C", "D"]


def _block_graph() -> Any:
    branch = _branch_graph()

    async def block(state: BlockState) -> dict[str, Any]:
        scratchpad = get_config()["configurable"][CONFIG_KEY_SCRATCHPAD]
        tasks = [
            asyncio.ensure_future(
                invoke_pinned(branch, {"name": n, "out": []}, scratchpad, 1000 + i, {})
            )
            for i, n in enumerate(NAMES)
        ]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        paused = [r for r in results if isinstance(r, GraphInterrupt)]
        if paused:
            raise GraphInterrupt(tuple(i for e in paused for i in e.args[0]))
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            raise failed[0]
        return {"log": [r["out"] for r in results if not isinstance(r, BaseException)]}

    graph = StateGraph(BlockState)
    graph.add_node("block", block)
    graph.add_edge(START, "block")
    graph.add_edge("block", END)
    return graph.compile(checkpointer=InMemorySaver())


async def test_pinned_branches_never_resume_another_branchs_checkpoint() -> None:
    graph = _block_graph()
    for trial in range(20):
        config: Any = {"configurable": {"thread_id": f"t{trial}"}, "callbacks": [SlowCallback()]}
        first = await graph.ainvoke({}, config, version="v2")
        resume = {i.id: f"ok-{i.value.split()[-1]}" for i in first.interrupts}
        done = await graph.ainvoke(Command(resume=resume), config)
        for name, out in zip(NAMES, done["log"], strict=True):
            assert out == [f"s1({name})", f"s2({name})=ok-{name}"], (trial, done["log"])


def test_slot_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="slot 0"):
        asyncio.run(invoke_pinned(None, {}, None, 0, {}))  # type: ignore[arg-type]


# ---- h: a stale or duplicate answer must never answer the next question of the same node


async def test_a_duplicate_answer_never_answers_the_next_question(make_office: MakeOffice) -> None:
    mock_llm(OfficeAgent).then_return(
        call_tool(RefundCardTool, {"order_id": "1", "amount": 1.0}),
        call_tool(RefundCardTool, {"order_id": "2", "amount": 2.0}),
        "done",
    )
    office = await make_office()
    await run(office)
    first = office.inbox.last("refund-card-tool").pause_id
    after_first = await office.app.resume(
        first, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    assert after_first.status is ExecutionStatus.PAUSED  # the second question waits
    with pytest.raises(NotPausedError):
        await office.app.resume(
            first, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    [pending] = await office.app.list_pending(tenant_id="acme")
    assert pending.ask.arguments["order_id"] == "2"
    assert [r[1]["order_id"] for r in office.ledger.runs] == ["1"]
