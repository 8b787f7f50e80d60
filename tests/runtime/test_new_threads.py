"""A new root's first pass reads no checkpoint from the database: its thread was made for it, so
the read could only find none (``bot.store.new_threads``). Every other read still goes to the
database — the same thread's next one, a subgraph's, a resumed or recovered pass's."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from bot.runtime.checkpoints import OpenCheckpointer, open_checkpointer
from bot.store.database import DatabaseUrl
from bot.store.new_threads import NewThreads
from tests.benchmarks.cycle_cost import bench_app, pay_cycle
from tests.benchmarks.resume_throughput import Inbox
from tests.databases import BACKENDS, database


def test_a_new_thread_is_known_empty_once_in_its_root_namespace_while_its_pass_runs() -> None:
    threads = NewThreads()
    root: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    assert not threads.known_empty(root)  # not named new
    with threads.first_pass("t"):
        assert not threads.known_empty({"configurable": {"thread_id": "t", "checkpoint_ns": "a:1"}})
        assert not threads.known_empty(
            {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c"}}
        )
        assert not threads.known_empty({"configurable": {"thread_id": "u", "checkpoint_ns": ""}})
        assert threads.known_empty(root)
        assert not threads.known_empty(root)  # its first read only
    with contextlib.suppress(RuntimeError), threads.first_pass("t"):
        raise RuntimeError("the first pass failed before its read")
    assert not threads.known_empty(root)  # the pass over: its recovery reads the database


class _State(TypedDict):
    n: int


def _counting_graph(saver: Any) -> Any:
    graph = StateGraph(_State)
    graph.add_node("add", lambda state: {"n": state["n"] + 1})
    graph.add_edge(START, "add")
    graph.add_edge("add", END)
    return graph.compile(checkpointer=saver)


@contextlib.asynccontextmanager
async def _saver(kind: str, tmp_path: Path) -> AsyncIterator[OpenCheckpointer]:
    async with database(kind, tmp_path) as url:
        opened = await open_checkpointer(DatabaseUrl.parse(url))
        try:
            yield opened
        finally:
            await opened.close()


@pytest.mark.parametrize("kind", BACKENDS)
async def test_the_saver_answers_a_new_threads_first_read_itself(kind: str, tmp_path: Path) -> None:
    """Shown on a thread that does hold a checkpoint: the read named new finds none (so it did
    not ask the database); the next one finds what is there."""
    async with _saver(kind, tmp_path) as opened:
        assert opened.new_threads is not None
        config: Any = {"configurable": {"thread_id": "t"}}
        graph = _counting_graph(opened.saver)
        assert await graph.ainvoke({"n": 1}, config, durability="sync") == {"n": 2}
        with opened.new_threads.first_pass("t"):
            assert await opened.saver.aget_tuple(config) is None
            found = await opened.saver.aget_tuple(config)
            assert found is not None and found.checkpoint["channel_values"]["n"] == 2
        assert await opened.saver.aget_tuple(config) is not None


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_pause_cycle_reads_a_checkpoint_from_the_database_once(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The execution's first pass reads none; the resumed pass reads the pause's checkpoint."""
    reads: list[Any] = []
    if kind == "sqlite":
        get_tuple = SqliteSaver.get_tuple

        def counted(self: Any, config: Any) -> Any:
            reads.append(config)
            return get_tuple(self, config)

        monkeypatch.setattr(SqliteSaver, "get_tuple", counted)
    else:
        aget_tuple = AsyncPostgresSaver.aget_tuple

        async def acounted(self: Any, config: Any) -> Any:
            reads.append(config)
            return await aget_tuple(self, config)

        monkeypatch.setattr(AsyncPostgresSaver, "aget_tuple", acounted)
    inbox = Inbox()
    async with database(kind, tmp_path) as url, bench_app(url, inbox) as app:
        await pay_cycle(app, inbox, "inv-1")
        assert len(reads) == 1, reads
        await pay_cycle(app, inbox, "inv-2")  # a second run on the same App: the same
        assert len(reads) == 2, reads
