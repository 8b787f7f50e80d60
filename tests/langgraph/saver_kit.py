"""What the checkpointer tests share: LangGraph's conformance suite run on ours beside the saver
it extends or replaces, and a one-question graph to pause and answer on either."""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.checkpoint.conformance import validate
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


async def assert_passes_what_it_passes(ours: Any, reference: Any) -> None:
    """Every capability of LangGraph's conformance suite ``reference`` passes, ``ours`` passes
    (both registered with ``checkpointer_test``), and all the base ones."""
    report = await validate(ours)
    theirs = await validate(reference)
    assert report.passed_all_base(), report.results
    for capability, result in theirs.results.items():
        if result is not None and result.passed is True:
            assert report.results[capability] is not None, capability
            assert report.results[capability].passed is True, (capability, report.results)


class AskingState(TypedDict):
    asked: str
    answer: str


def asking_graph(saver: Any) -> Any:
    """One node that asks ``asked`` (an interrupt) and keeps the answer."""

    def ask(state: AskingState) -> dict[str, str]:
        return {"answer": interrupt(state["asked"])}

    graph = StateGraph(AskingState)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=saver)
