"""Countersign's PostgreSQL checkpointer (``SealedPostgresSaver``): LangGraph's checkpointer
conformance suite beside ``AsyncPostgresSaver``, the saver it extends, and its (de)serialising
on the loop, with no hand-off to a worker thread."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.checkpoint.conformance import checkpointer_test
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.types import Command

from bot.runtime.checkpoints import open_checkpointer
from bot.security import postgres_saver
from bot.security.postgres_saver import SealedPostgresSaver
from bot.store.database import DatabaseUrl
from tests.benchmarks.resume_throughput import postgres_saver as stock_saver
from tests.databases import postgres_database
from tests.langgraph.saver_kit import asking_graph, assert_passes_what_it_passes

pytestmark = pytest.mark.postgres


@checkpointer_test(name="SealedPostgresSaver")
async def ours() -> AsyncIterator[Any]:
    async with postgres_database() as url:
        opened = await open_checkpointer(DatabaseUrl.parse(url))
        try:
            assert isinstance(opened.saver, SealedPostgresSaver)
            yield opened.saver
        finally:
            await opened.close()


@checkpointer_test(name="AsyncPostgresSaver")
async def theirs() -> AsyncIterator[Any]:
    async with postgres_database() as url, stock_saver(url) as saver:
        assert type(saver) is AsyncPostgresSaver
        yield saver


async def test_our_postgres_saver_passes_every_capability_langgraphs_own_passes() -> None:
    await assert_passes_what_it_passes(ours, theirs)


def test_the_mirror_matches_the_installed_parent() -> None:
    """The methods mirrored without their thread hand-offs are the installed release's: a
    LangGraph release that changes one turns the mirror off (the parent's run, with their
    hand-offs) — this says so, for the mirror to be written again against it."""
    assert postgres_saver.MIRROR_IN_USE, {
        name: postgres_saver.source_digest(getattr(AsyncPostgresSaver, name))
        for name in postgres_saver._MIRRORED
    }


async def _pause_and_answer(saver: Any, thread_id: str) -> None:
    config: Any = {"configurable": {"thread_id": thread_id}}
    graph = asking_graph(saver)
    paused = await graph.ainvoke({"asked": "pay?"}, config, durability="sync")
    assert paused["__interrupt__"][0].value == "pay?"
    done = await graph.ainvoke(Command(resume="yes"), config, durability="sync")
    assert done == {"asked": "pay?", "answer": "yes"}
    state = await graph.aget_state(config)
    assert state.values == done


@pytest.mark.parametrize("mirror", [True, False], ids=["mirror", "parent"])
async def test_a_cycle_hands_nothing_to_a_thread_unless_the_mirror_is_off(
    monkeypatch: pytest.MonkeyPatch, mirror: bool
) -> None:
    """Dumping the blobs and the writes, loading the pending writes: on the loop. With the
    mirror off (a LangGraph release it was not written for) the parent's methods run, hand-offs
    and all, and the cycle is the same."""
    handed: list[str] = []
    to_thread = asyncio.to_thread

    async def counted(function: Any, /, *args: Any, **kwargs: Any) -> Any:
        handed.append(getattr(function, "__name__", repr(function)))
        return await to_thread(function, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    monkeypatch.setattr(postgres_saver, "MIRROR_IN_USE", mirror)
    async with postgres_database() as url:
        opened = await open_checkpointer(DatabaseUrl.parse(url))
        try:
            await _pause_and_answer(opened.saver, "one")
        finally:
            await opened.close()
    if mirror:
        assert handed == []
    else:
        assert {"_dump_blobs", "_dump_writes", "_load_writes"} <= set(handed), handed


async def test_either_saver_resumes_what_the_other_wrote() -> None:
    """The same tables and rows: a thread paused by the stock saver is answered by ours."""
    async with postgres_database() as url:
        config: Any = {"configurable": {"thread_id": "theirs-then-ours"}}
        async with stock_saver(url) as theirs:
            paused = await asking_graph(theirs).ainvoke({"asked": "a?"}, config)
            assert paused["__interrupt__"][0].value == "a?"
        opened = await open_checkpointer(DatabaseUrl.parse(url))
        try:
            done = await asking_graph(opened.saver).ainvoke(Command(resume="ok"), config)
            assert done == {"asked": "a?", "answer": "ok"}
            # read back: "asked", kept inline by theirs, unchanged since, is a blob of ours now
            state = await asking_graph(opened.saver).aget_state(config)
            assert state.values == {"asked": "a?", "answer": "ok"}
        finally:
            await opened.close()


async def test_a_value_is_written_as_a_blob_when_its_channel_changes_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A string is sealed as a blob like any value, once per version: the checkpoints after it
    that leave its channel unchanged refer to that blob (no blob written again: a statement
    each, on the pause cycle's every checkpoint)."""
    dumped: list[str] = []
    dump_blobs = SealedPostgresSaver._dump_blobs

    def counted(self: Any, thread_id: str, ns: str, values: Any, versions: Any) -> Any:
        rows = dump_blobs(self, thread_id, ns, values, versions)
        dumped.extend(row[2] for row in rows)
        return rows

    monkeypatch.setattr(SealedPostgresSaver, "_dump_blobs", counted)
    async with postgres_database() as url:
        opened = await open_checkpointer(DatabaseUrl.parse(url))
        try:
            config: Any = {"configurable": {"thread_id": "ours"}}
            await asking_graph(opened.saver).ainvoke({"asked": "a?"}, config)
            await asking_graph(opened.saver).ainvoke(Command(resume="ok"), config)
            state = await asking_graph(opened.saver).aget_state(config)
            assert state.values == {"asked": "a?", "answer": "ok"}
        finally:
            await opened.close()
    if postgres_saver.MIRROR_IN_USE:
        assert dumped.count("asked") == 1, dumped
        assert dumped.count("answer") == 1, dumped
