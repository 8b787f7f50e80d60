"""Countersign's SQLite checkpointer (``ThreadedSqliteSaver``) against LangGraph's checkpointer
conformance suite (``langgraph-checkpoint-conformance``), beside ``AsyncSqliteSaver``, the saver it
replaces: every capability that one passes, ours passes."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from langgraph.checkpoint.conformance import checkpointer_test
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from bot.runtime.sqlite_saver import ThreadedSqliteSaver
from tests.langgraph.saver_kit import asking_graph, assert_passes_what_it_passes


@checkpointer_test(name="ThreadedSqliteSaver")
async def ours() -> AsyncIterator[Any]:
    with tempfile.TemporaryDirectory() as folder:
        saver = await ThreadedSqliteSaver.open(Path(folder) / "c.db", serde=None)
        try:
            yield saver
        finally:
            await saver.close()


@checkpointer_test(name="AsyncSqliteSaver")
async def theirs() -> AsyncIterator[Any]:
    with tempfile.TemporaryDirectory() as folder:
        async with aiosqlite.connect(str(Path(folder) / "c.db")) as connection:
            saver = AsyncSqliteSaver(connection)
            await saver.setup()
            yield saver


async def test_our_sqlite_saver_passes_every_capability_langgraphs_own_passes() -> None:
    await assert_passes_what_it_passes(ours, theirs)


async def test_a_file_either_saver_wrote_is_resumed_by_the_other(tmp_path: Path) -> None:
    """Databases written before (by ``AsyncSqliteSaver``) go on with ours, and back."""
    path = tmp_path / "c.db"
    first: Any = {"configurable": {"thread_id": "theirs-then-ours"}}
    second: Any = {"configurable": {"thread_id": "ours-then-theirs"}}
    async with aiosqlite.connect(str(path)) as connection:
        theirs = AsyncSqliteSaver(connection)
        paused = await asking_graph(theirs).ainvoke({"asked": "a?"}, first, durability="sync")
        assert paused["__interrupt__"][0].value == "a?"
    ours = await ThreadedSqliteSaver.open(path, serde=None)
    try:
        graph = asking_graph(ours)
        done = await graph.ainvoke(Command(resume="yes"), first, durability="sync")
        assert done == {"asked": "a?", "answer": "yes"}
        paused = await graph.ainvoke({"asked": "b?"}, second, durability="sync")
        assert paused["__interrupt__"][0].value == "b?"
    finally:
        await ours.close()
    async with aiosqlite.connect(str(path)) as connection:
        graph = asking_graph(AsyncSqliteSaver(connection))
        done = await graph.ainvoke(Command(resume="no"), second, durability="sync")
        assert done == {"asked": "b?", "answer": "no"}


async def test_a_closed_saver_refuses_calls(tmp_path: Path) -> None:
    saver = await ThreadedSqliteSaver.open(tmp_path / "c.db", serde=None)
    await saver.close()
    await saver.close()  # again: nothing more
    with pytest.raises(RuntimeError, match="closed"):
        await saver.aget_tuple({"configurable": {"thread_id": "t"}})


async def test_a_saver_whose_setup_fails_leaves_no_thread_or_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Any] = []

    def refusing(self: ThreadedSqliteSaver) -> None:
        opened.append(self.conn)
        raise RuntimeError("setup refused")

    monkeypatch.setattr(ThreadedSqliteSaver, "setup", refusing)
    with pytest.raises(RuntimeError, match="setup refused"):
        await ThreadedSqliteSaver.open(tmp_path / "c.db", serde=None)
    [conn] = opened
    with pytest.raises(Exception, match="closed"):
        conn.execute("SELECT 1")
    assert not [t for t in threading.enumerate() if t.name == "cs-checkpoints-c.db"]
