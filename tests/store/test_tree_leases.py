"""A pass's lease shares a transaction with its first and last write: SQLite file, PostgreSQL and
the in-memory store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.enums import ExecutionStatus, PauseResolution, PauseStatus
from bot.core.failures import ExecutionFailure
from bot.store.closings import Replied
from bot.store.database import Database
from bot.store.leases import LeaseClaim, SqlLeases
from bot.store.memory import MemoryStore
from bot.store.records import NewExecution, PauseAnswer, ThreadBusy
from bot.store.repositories import Leases, PauseStore
from bot.store.sql import SqlStore
from tests.databases import STORE_BACKENDS, database
from tests.store.test_contract import new_pause

BOOM = ExecutionFailure(code="agent.failed", message="boom")

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TTL = timedelta(seconds=60)


@pytest.fixture(params=STORE_BACKENDS)
async def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[PauseStore, Leases]]:
    if request.param == "memory":
        memory = MemoryStore()
        yield memory, memory.leases
        return
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        yield SqlStore(opened), SqlLeases(opened)


def claim(owner: str, *, root: str = "root-1", at: datetime = NOW) -> LeaseClaim:
    return LeaseClaim(root, owner, at, TTL)


def new_root(execution_id: str = "root-1") -> NewExecution:
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


async def test_start_tree_records_the_root_and_takes_its_lease(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, leases = stores
    assert await store.start_tree(new_root(), claim("a"))
    assert await store.start_tree(new_root(), claim("a"))  # safe to repeat: one record
    assert [r.execution_id for r in await store.list_executions_by_root("root-1")] == ["root-1"]
    assert not await leases.try_take(claim("b"))  # a's lease is live
    assert await leases.live_roots(NOW) == {"root-1"}


async def test_start_tree_writes_nothing_while_another_holds_the_lease(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, leases = stores
    assert await leases.try_take(claim("b"))
    assert not await store.start_tree(new_root(), claim("a"))
    assert await store.start_tree(new_root(), claim("a", at=NOW + TTL + timedelta(seconds=1)))
    assert await store.get("root-1") is not None


async def test_open_tree_waits_for_a_live_lease_and_takes_an_expired_one(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, _ = stores
    await store.start_tree(new_root(), claim("dead"))
    assert await store.open_tree(claim("a")) is None
    assert await store.open_tree(claim("a", at=NOW + TTL - timedelta(seconds=1))) is None
    opened = await store.open_tree(claim("a", at=NOW + TTL + timedelta(seconds=1)))
    assert opened is not None and not opened.released
    assert opened.execution is not None and opened.execution.status is ExecutionStatus.RUNNING


async def test_open_tree_reads_the_resolved_and_pending_pauses(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, _ = stores
    await store.start_tree(new_root(), claim("a"))
    resolved = await store.get_or_create(new_pause("k1"))
    pending = await store.get_or_create(new_pause("k2", at=NOW + timedelta(seconds=1)))
    taken = await store.get_or_create(new_pause("k3", at=NOW + timedelta(seconds=2)))
    resting = await store.rest("root-1", {"k1": "i-1", "k2": "i-2"}, NOW, release=claim("a"))
    assert resting.released  # nothing was answered yet
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    await store.close(resolved.pause_id, Replied(answer=answer), at=NOW, tenant_id="acme")
    await store.close(taken.pause_id, Replied(answer=answer), at=NOW, tenant_id="acme")
    assert await store.take(taken)
    later = NOW + timedelta(seconds=5)
    opened = await store.open_tree(claim("b", at=later))
    assert opened is not None
    assert [(p.pause_id, p.status) for p in opened.pauses] == [
        (resolved.pause_id, PauseStatus.RESOLVED),
        (pending.pause_id, PauseStatus.PENDING),
    ]
    # a pass will continue k1: the tree is RUNNING from now on (recovery's mark if it dies);
    # the opened row is the tree as it was
    assert opened.execution is not None and opened.execution.status is ExecutionStatus.PAUSED
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.RUNNING and row.updated_at == later


async def test_open_tree_with_nothing_to_continue_leaves_the_status(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, _ = stores
    await store.start_tree(new_root(), claim("a"))
    await store.get_or_create(new_pause("k1"))
    await store.rest("root-1", {"k1": "i-1"}, NOW, release=claim("a"))
    opened = await store.open_tree(claim("b", at=NOW + timedelta(seconds=5)))
    assert opened is not None and opened.execution is not None
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.PAUSED and row.updated_at == NOW


async def test_open_tree_of_an_ended_or_unknown_tree_gives_the_lease_back(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, leases = stores
    unknown = await store.open_tree(claim("a", root="nobody"))
    assert unknown is not None and unknown.execution is None and unknown.released
    await store.start_tree(new_root(), claim("a"))
    await store.end_tree("root-1", ExecutionStatus.COMPLETED, NOW, release=claim("a"))
    ended = await store.open_tree(claim("b"))
    assert ended is not None and ended.released
    assert ended.execution is not None and ended.execution.status is ExecutionStatus.COMPLETED
    assert await leases.live_roots(NOW) == set()


async def test_rest_gives_the_lease_up_only_when_nothing_waits_to_be_continued(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, leases = stores
    await store.start_tree(new_root(), claim("a"))
    first = await store.get_or_create(new_pause("k1"))
    second = await store.get_or_create(new_pause("k2", at=NOW + timedelta(seconds=1)))
    # an answer recorded while the pass ran: the pass goes on with it, the lease stays
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    await store.close(first.pause_id, Replied(answer=answer), at=NOW, tenant_id="acme")
    kept = await store.rest("root-1", {"k1": "i-1", "k2": "i-2"}, NOW, release=claim("a"))
    assert not kept.released
    assert [(p.interrupt_id, p.status) for p in kept.pauses] == [
        ("i-1", PauseStatus.RESOLVED),
        ("i-2", PauseStatus.PENDING),
    ]
    assert await leases.live_roots(NOW) == {"root-1"}
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.RUNNING  # another pass comes
    assert await store.take(first)
    given_up = await store.rest("root-1", {"k2": "i-2"}, NOW, release=claim("a"))
    assert given_up.released
    assert [p.pause_id for p in given_up.pauses] == [second.pause_id]
    assert await leases.live_roots(NOW) == set()
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.PAUSED


async def test_an_interrupt_answered_in_part_is_not_continued(
    stores: tuple[PauseStore, Leases],
) -> None:
    """An attached graph's interrupt asking two questions waits until both are answered: the
    tree rests PAUSED and the lease is given up (and so does a pause with no interrupt id)."""
    store, leases = stores
    await store.start_tree(new_root(), claim("a"))
    first = await store.get_or_create(new_pause("k1"))
    await store.get_or_create(new_pause("k2", at=NOW + timedelta(seconds=1)))
    await store.get_or_create(new_pause("k3", at=NOW + timedelta(seconds=2)))
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    await store.close(first.pause_id, Replied(answer=answer), at=NOW, tenant_id="acme")
    rested = await store.rest("root-1", {"k1": "i-1", "k2": "i-1"}, NOW, release=claim("a"))
    assert rested.released
    assert [(p.interrupt_id, p.status) for p in rested.pauses] == [
        ("i-1", PauseStatus.RESOLVED),
        ("i-1", PauseStatus.PENDING),
        (None, PauseStatus.PENDING),
    ]
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.PAUSED
    assert await leases.live_roots(NOW) == set()


async def test_rest_keeps_the_lease_without_a_claim(stores: tuple[PauseStore, Leases]) -> None:
    store, leases = stores
    await store.start_tree(new_root(), claim("a"))
    await store.get_or_create(new_pause("k1"))
    resting = await store.rest("root-1", {"k1": "i-1"}, NOW)
    assert not resting.released and await leases.live_roots(NOW) == {"root-1"}


async def test_end_tree_closes_what_waits_records_the_end_and_gives_the_lease_up(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, leases = stores
    await store.start_tree(new_root(), claim("a"))
    sent = await store.get_or_create(new_pause("k1"))
    unsent = await store.get_or_create(new_pause("k2", at=NOW + timedelta(seconds=1)))
    resolved = await store.get_or_create(new_pause("k3", at=NOW + timedelta(seconds=2)))
    await store.mark_sent(sent.pause_id)
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    await store.close(resolved.pause_id, Replied(answer=answer), at=NOW, tenant_id="acme")
    closed = await store.end_tree(
        "root-1", ExecutionStatus.FAILED, NOW, error=BOOM, release=claim("a")
    )
    assert [(c.pause_id, c.is_sent) for c in closed] == [
        (sent.pause_id, True),
        (unsent.pause_id, False),
    ]
    assert all(
        c.status is PauseStatus.CANCELLED and c.resolution is PauseResolution.CANCELLED
        for c in closed
    )
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.FAILED and row.error == BOOM
    audit = await store.find_pause_answers("acme", "root-1")
    assert sorted(a.resolution.value for a in audit) == ["CANCELLED", "CANCELLED", "REPLIED"]
    assert await leases.live_roots(NOW) == set()
    # a second end closes nothing more and the first closer alone told the channel
    assert await store.end_tree("root-1", ExecutionStatus.FAILED, NOW) == []


async def test_one_of_many_concurrent_takers_gets_the_lease(
    stores: tuple[PauseStore, Leases],
) -> None:
    _, leases = stores
    taken = await asyncio.gather(*(leases.try_take(claim(f"owner-{i}")) for i in range(20)))
    assert taken.count(True) == 1


async def test_a_lease_is_renewed_and_released_only_by_its_owner(
    stores: tuple[PauseStore, Leases],
) -> None:
    _, leases = stores
    assert await leases.try_take(claim("a"))
    assert await leases.try_take(claim("a"))  # already ours
    assert not await leases.renew(claim("b"))
    assert await leases.renew(claim("a", at=NOW + timedelta(seconds=50)))
    assert not await leases.try_take(claim("b", at=NOW + timedelta(seconds=70)))  # renewed
    await leases.release(claim("b"))
    assert await leases.live_roots(NOW) == {"root-1"}
    await leases.release(claim("a"))
    assert await leases.live_roots(NOW) == set()


async def test_only_taking_over_another_owner_s_expired_lease_is_a_takeover(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, leases = stores
    takeovers: list[str] = []

    def noting(owner: str, at: datetime) -> LeaseClaim:
        return LeaseClaim("root-1", owner, at, TTL, on_takeover=lambda: takeovers.append(owner))

    assert await store.start_tree(new_root(), noting("a", NOW))  # free: taken, no takeover
    assert await leases.try_take(noting("a", NOW + timedelta(seconds=1)))  # its own again
    assert not await leases.try_take(noting("b", NOW + timedelta(seconds=2)))  # live: refused
    assert takeovers == []
    later = NOW + TTL + timedelta(seconds=2)
    opened = await store.open_tree(noting("b", later))  # a's lease expired: b takes it over
    assert opened is not None
    assert takeovers == ["b"]
    await leases.release(noting("b", later))
    assert await leases.try_take(noting("c", later))  # released, so free again: no takeover
    assert takeovers == ["b"]


def attached_root(execution_id: str, *, thread: str = "t1") -> NewExecution:
    return NewExecution(
        execution_id=execution_id,
        root_execution_id=execution_id,
        parent_execution_id=None,
        thread_id=thread,
        tenant_id="acme",
        owner_id="U1",
        workflow="langgraph:refund-agent",
        input={"input": "hi"},
        created_at=NOW,
    )


async def test_one_live_execution_per_thread_of_an_attached_graph(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, _ = stores
    assert await store.start_tree(attached_root("e1"), claim("a", root="e1"))
    assert await store.start_tree(attached_root("e1"), claim("a", root="e1"))  # a repeat
    with pytest.raises(ThreadBusy) as busy:
        await store.start_tree(attached_root("e2"), claim("b", root="e2"))
    assert busy.value.execution_id == "e1"
    assert await store.get("e2") is None  # nothing written, its lease not taken
    assert await store.start_tree(attached_root("e3", thread="t2"), claim("b", root="e3"))
    await store.set_status("e1", ExecutionStatus.COMPLETED, NOW)
    assert await store.start_tree(attached_root("e2"), claim("b", root="e2"))  # e1 ended


async def test_our_own_workflows_may_share_a_thread(stores: tuple[PauseStore, Leases]) -> None:
    store, _ = stores
    assert await store.start_tree(new_root("e1"), claim("a", root="e1"))
    assert await store.start_tree(new_root("e2"), claim("a", root="e2"))
    assert {r.execution_id for r in await store.list_executions_by_thread("acme", "t1")} == {
        "e1",
        "e2",
    }


async def test_two_attached_starts_on_one_thread_at_once_make_one_execution(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, _ = stores
    started = await asyncio.gather(
        *(store.start_tree(attached_root(f"e{i}"), claim("a", root=f"e{i}")) for i in range(4)),
        return_exceptions=True,
    )
    assert sum(1 for s in started if s is True) == 1
    assert sum(1 for s in started if isinstance(s, ThreadBusy)) == 3
    assert len(await store.list_executions_by_thread("acme", "t1")) == 1


async def _resting_tree(store: PauseStore) -> tuple[str, str]:
    """A tree resting on two pauses (their interrupts known), its lease given up."""
    await store.start_tree(new_root(), claim("a"))
    first = await store.get_or_create(new_pause("k1"))
    second = await store.get_or_create(new_pause("k2", at=NOW + timedelta(seconds=1)))
    await store.rest("root-1", {"k1": "i-1", "k2": "i-2"}, NOW, release=claim("a"))
    return first.pause_id, second.pause_id


APPROVED = Replied(answer=PauseAnswer(decision={"approved": True}, responder="m"))


async def test_close_opening_records_the_answer_and_opens_the_tree_at_once(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, leases = stores
    first, second = await _resting_tree(store)
    later = NOW + timedelta(seconds=5)
    closed = await store.close_opening(
        first, APPROVED, at=later, tenant_id="acme", lease=claim("b", at=later)
    )
    assert closed.record is not None and closed.record.status is PauseStatus.RESOLVED
    assert closed.tree is not None and not closed.tree.released
    assert [(p.pause_id, p.status) for p in closed.tree.pauses] == [
        (first, PauseStatus.RESOLVED),  # what the answer just wrote
        (second, PauseStatus.PENDING),
    ]
    assert closed.tree.execution is not None
    assert closed.tree.execution.status is ExecutionStatus.PAUSED  # the row as it was
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.RUNNING and row.updated_at == later
    assert not await leases.try_take(claim("c", at=later))  # b holds it
    assert len(await store.find_pause_answers("acme", "root-1")) == 1


async def test_close_opening_under_a_lease_held_elsewhere_records_the_answer_alone(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, leases = stores
    first, _ = await _resting_tree(store)
    assert await leases.try_take(claim("holder"))
    closed = await store.close_opening(first, APPROVED, at=NOW, tenant_id="acme", lease=claim("b"))
    assert closed.record is not None and closed.record.status is PauseStatus.RESOLVED
    assert closed.tree is None
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.PAUSED  # left for the holder
    assert not await leases.try_take(claim("b"))  # still the holder's


async def test_close_opening_of_a_pause_that_no_longer_waits_writes_nothing(
    stores: tuple[PauseStore, Leases],
) -> None:
    store, leases = stores
    first, _ = await _resting_tree(store)
    await store.close(first, APPROVED, at=NOW, tenant_id="acme")
    closed = await store.close_opening(first, APPROVED, at=NOW, tenant_id="acme", lease=claim("b"))
    assert closed.record is None and closed.tree is None
    assert await leases.live_roots(NOW) == set()  # the lease was not taken
    assert len(await store.find_pause_answers("acme", "root-1")) == 1
