"""The message references' contract (``MessageRefs``), run on SQLite, PostgreSQL and in memory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.enums import ExecutionStatus
from bot.store.database import Database
from bot.store.memory import MemoryMessageRefs, MemoryStore
from bot.store.message_refs import SqlMessageRefs
from bot.store.records import MessageRefRecord, NewExecution
from bot.store.repositories import MessageRefs, PauseStore
from bot.store.sql import SqlStore
from tests.databases import STORE_BACKENDS, database

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=STORE_BACKENDS)
async def refs(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MessageRefs]:
    if request.param == "memory":
        yield MemoryMessageRefs()
        return
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        yield SqlMessageRefs(opened)


def ref(
    pause: str,
    *,
    conversation: str = "C0APPROVALS",
    thread: str = "1.1",
    at: datetime = NOW,
    closed_at: datetime | None = None,
    turn: str | None = None,
) -> MessageRefRecord:
    return MessageRefRecord(
        pause_id=pause * 32,
        tenant_id="T0TEAM",
        channel="slack-refunds",
        conversation=conversation,
        thread=thread,
        role="approvers",
        reference={"ts": "1.1", "thread_ts": None, "n": 3, "edited": True},
        created_at=at,
        closed_at=closed_at,
        turn=turn,
    )


async def test_a_reference_is_read_back_as_it_was_added(refs: MessageRefs) -> None:
    assert await refs.add(ref("a"))
    assert await refs.get("a" * 32) == ref("a")
    assert await refs.get("b" * 32) is None


async def test_a_second_reference_of_a_pause_is_refused_and_the_first_kept(
    refs: MessageRefs,
) -> None:
    assert await refs.add(ref("a"))
    assert not await refs.add(ref("a", conversation="C0OTHER"))
    found = await refs.get("a" * 32)
    assert found is not None and found.conversation == "C0APPROVALS"


async def test_racing_adds_of_one_pause_store_one(refs: MessageRefs) -> None:
    added = await asyncio.gather(*(refs.add(ref("a", thread=f"{n}.0")) for n in range(6)))
    assert sorted(added) == [False] * 5 + [True]


async def test_only_the_call_that_closes_a_reference_is_told_it_did(refs: MessageRefs) -> None:
    await refs.add(ref("a"))
    later = NOW + timedelta(minutes=5)

    closed = await asyncio.gather(*(refs.close("a" * 32, later) for _ in range(4)))

    assert sorted(closed) == [False, False, False, True]
    found = await refs.get("a" * 32)
    assert found is not None and found.closed and found.closed_at == later
    assert not await refs.close("b" * 32, later)  # unknown


async def test_open_references_are_found_by_conversation_and_thread_oldest_first(
    refs: MessageRefs,
) -> None:
    await refs.add(ref("b", at=NOW + timedelta(seconds=2)))
    await refs.add(ref("a", at=NOW + timedelta(seconds=1)))
    await refs.add(ref("c", thread="2.2"))  # another thread
    await refs.add(ref("d", conversation="C0OTHER"))  # the same thread id elsewhere
    await refs.add(ref("e", closed_at=NOW))  # closed when added
    await refs.add(ref("f"))
    await refs.close("f" * 32, NOW)

    found = await refs.open_in_thread("C0APPROVALS", "1.1")

    assert [r.pause_id for r in found] == ["a" * 32, "b" * 32]
    assert await refs.open_in_thread("C0APPROVALS", "9.9") == []


async def test_every_reference_of_a_thread_is_found_open_or_closed_oldest_first(
    refs: MessageRefs,
) -> None:
    await refs.add(ref("b", at=NOW + timedelta(seconds=2)))
    await refs.add(ref("a", at=NOW + timedelta(seconds=1)))
    await refs.add(ref("c", thread="2.2"))  # another thread
    await refs.add(ref("d", conversation="C0OTHER"))  # the same thread id elsewhere
    await refs.add(ref("e", at=NOW + timedelta(seconds=3), closed_at=NOW))  # closed when added
    await refs.close("a" * 32, NOW)  # closed since

    found = await refs.in_thread("C0APPROVALS", "1.1")

    assert [r.pause_id for r in found] == ["a" * 32, "b" * 32, "e" * 32]
    assert [r.closed for r in found] == [True, False, True]
    assert await refs.in_thread("C0APPROVALS", "9.9") == []


def test_a_reference_never_shows_its_pause_id() -> None:
    assert "a" * 32 not in repr(ref("a"))


async def test_the_open_references_are_read_in_pages_by_pause(refs: MessageRefs) -> None:
    for pause in "dbca":
        assert await refs.add(ref(pause))
    assert await refs.close("c" * 32, NOW)

    first = await refs.open_refs(limit=2)
    assert [r.pause_id for r in first] == ["a" * 32, "b" * 32]
    rest = await refs.open_refs(after=first[-1].pause_id, limit=2)
    assert [r.pause_id for r in rest] == ["d" * 32]  # the closed one is left out
    assert await refs.open_refs(after="d" * 32) == []


TURN = "f" * 64


async def test_a_turn_s_references_are_read_with_the_pause_s_own_in_one_call(
    refs: MessageRefs,
) -> None:
    await refs.add(ref("b", at=NOW + timedelta(seconds=2), turn=TURN))
    await refs.add(ref("a", at=NOW + timedelta(seconds=1), turn=TURN))
    await refs.add(ref("c", turn="e" * 64))  # another turn
    await refs.add(ref("d"))  # in no turn

    found = await refs.asked_with("d" * 32, TURN)
    assert [r.pause_id for r in found] == ["d" * 32, "a" * 32, "b" * 32]
    assert [r.turn for r in found] == [None, TURN, TURN]
    assert [r.pause_id for r in await refs.asked_with("9" * 32, TURN)] == ["a" * 32, "b" * 32]
    assert await refs.asked_with("9" * 32, "0" * 64) == []


async def test_a_joining_reference_marks_its_message_shared_and_a_lone_one_stays_unshared(
    refs: MessageRefs,
) -> None:
    await refs.add(ref("a", turn=TURN))
    await refs.add(ref("c", thread="2.2"))
    first = await refs.get("a" * 32)
    assert first is not None and not first.shared  # alone in its message so far

    assert await refs.join(ref("b", turn=TURN), ["a" * 32])

    for pause in "ab":
        found = await refs.get(pause * 32)
        assert found is not None and found.shared and found.turn == TURN
    alone = await refs.get("c" * 32)
    assert alone is not None and not alone.shared
    assert not await refs.join(ref("b", conversation="C0OTHER"), ["c" * 32])  # it has one
    kept = await refs.get("b" * 32)
    assert kept is not None and kept.conversation == "C0APPROVALS"
    untouched = await refs.get("c" * 32)
    assert untouched is not None and not untouched.shared  # nothing marked


async def test_references_are_read_together_in_one_call(refs: MessageRefs) -> None:
    await refs.add(ref("b"))
    await refs.add(ref("a"))

    found = await refs.get_each(["b" * 32, "9" * 32, "a" * 32])

    assert [r.pause_id for r in found] == ["a" * 32, "b" * 32]  # by pause id, unknown left out
    assert await refs.get_each(["9" * 32]) == []


async def test_closing_references_together_says_which_this_call_closed(refs: MessageRefs) -> None:
    await refs.add(ref("a"))
    await refs.add(ref("b", closed_at=NOW))  # closed already
    later = NOW + timedelta(minutes=5)

    closed = await refs.close_each(["a" * 32, "b" * 32, "9" * 32], later)

    assert closed == ["a" * 32]
    assert await refs.close_each(["a" * 32], later) == []  # only once
    found = await refs.get("a" * 32)
    assert found is not None and found.closed_at == later
    kept = await refs.get("b" * 32)
    assert kept is not None and kept.closed_at == NOW


async def test_racing_closings_of_one_reference_close_it_once(refs: MessageRefs) -> None:
    await refs.add(ref("a"))

    closed = await asyncio.gather(*(refs.close_each(["a" * 32], NOW) for _ in range(4)))

    assert sorted(closed) == [[], [], [], ["a" * 32]]


@pytest.fixture(params=STORE_BACKENDS)
async def refs_and_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[MessageRefs, PauseStore]]:
    """The references beside the executions they may record an end told in (one database)."""
    if request.param == "memory":
        store = MemoryStore()
        yield MemoryMessageRefs(store), store
        return
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        yield SqlMessageRefs(opened), SqlStore(opened)


async def test_a_closing_records_a_runs_end_told_with_it_once(
    refs_and_store: tuple[MessageRefs, PauseStore],
) -> None:
    """A channel's last write of a telling carries the run's end told (``told``): the end is
    no longer untold, and an end told already keeps when it was told."""
    refs, store = refs_and_store
    await store.ensure_execution(ended_root("run"))
    await store.set_status("run", ExecutionStatus.COMPLETED, NOW)
    await refs.add(ref("a"))
    later = NOW + timedelta(minutes=1)
    assert [r.execution_id for r in await store.untold_roots(later)] == ["run"]

    assert await refs.close_each(["a" * 32], later, told="run") == ["a" * 32]

    assert await store.untold_roots(later + timedelta(minutes=1)) == []
    assert not await store.mark_told("run", later)  # recorded already: told once
    assert await refs.close_each(["a" * 32], later, told="run") == []  # and nothing again


async def test_a_closing_that_closes_nothing_still_records_the_end_told(
    refs_and_store: tuple[MessageRefs, PauseStore],
) -> None:
    """The end is told once the channel's telling is over, whoever closed the message."""
    refs, store = refs_and_store
    await store.ensure_execution(ended_root("run"))
    await store.set_status("run", ExecutionStatus.COMPLETED, NOW)
    later = NOW + timedelta(minutes=1)

    assert await refs.close_each(["a" * 32], later, told="run") == []

    assert await store.untold_roots(later + timedelta(minutes=1)) == []


def ended_root(execution_id: str) -> NewExecution:
    return NewExecution(
        execution_id=execution_id,
        root_execution_id=execution_id,
        parent_execution_id=None,
        thread_id="t1",
        tenant_id="acme",
        owner_id="U1",
        workflow="w",
        input={"text": "hi"},
        created_at=NOW,
    )
