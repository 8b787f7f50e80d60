"""Round trips of the store's writes on PostgreSQL, counted on the wire (a loopback proxy).

A write of k statements in a transaction costs k + 2 round trips (BEGIN, the statements,
COMMIT); the writes ``bot.store.one_statement`` makes one statement cost one. Each is counted
warm (its statements prepared on the connection by a first run on another tree).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.enums import ExecutionStatus, PauseStatus
from bot.store import database as database_module
from bot.store.closings import Replied
from bot.store.database import Database
from bot.store.leases import LeaseClaim
from bot.store.records import NewExecution, PauseAnswer, PauseRecord
from bot.store.sql import SqlStore
from tests.benchmarks.round_trips import RoundTrips
from tests.databases import postgres_database
from tests.store.test_contract import new_pause

pytestmark = pytest.mark.postgres

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TTL = timedelta(seconds=60)


@pytest.fixture
async def proxied(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[SqlStore, RoundTrips]]:
    # an idle connection's ping is a round trip of its own: never within a test
    monkeypatch.setattr(database_module, "IDLE_PING_SECONDS", 3600.0)
    async with (
        postgres_database() as url,
        RoundTrips.between(url) as trips,
        Database.open(trips.proxied(url)) as opened,
    ):
        await opened.migrate(NOW)
        yield SqlStore(opened), trips


async def round_trips(trips: RoundTrips, work: Awaitable[object]) -> int:
    trips.count.clear()
    with trips.counting("work"):
        await work
    return sum(trips.count.values())


def claim(root: str, owner: str = "a", at: datetime = NOW) -> LeaseClaim:
    return LeaseClaim(root, owner, at, TTL)


def new_root(root: str) -> NewExecution:
    return NewExecution(
        execution_id=root,
        root_execution_id=root,
        parent_execution_id=None,
        thread_id=f"thread-{root}",
        tenant_id="acme",
        owner_id="U1",
        workflow="w",
        input={"text": "hi"},
        created_at=NOW,
    )


async def answered(store: SqlStore, root: str) -> PauseRecord:
    """A tree started with one pause, answered: ready to be taken."""
    assert await store.start_tree(new_root(root), claim(root))
    pause = await store.get_or_create(new_pause(f"{root}#0", root=root))
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    closed = await store.close(pause.pause_id, Replied(answer=answer), at=NOW, tenant_id="acme")
    assert closed is not None
    return closed


async def test_starting_a_tree_is_one_round_trip(proxied: tuple[SqlStore, RoundTrips]) -> None:
    store, trips = proxied
    assert await store.start_tree(new_root("warm"), claim("warm"))
    assert await round_trips(trips, store.start_tree(new_root("root-1"), claim("root-1"))) == 1
    # refused (the lease is another's): one round trip, nothing written
    refused = store.start_tree(new_root("root-2"), claim("root-1", owner="b"))
    assert await round_trips(trips, refused) == 1
    assert await store.get("root-2") is None


async def test_taking_an_answer_noting_what_the_tool_runs_with_is_one_round_trip(
    proxied: tuple[SqlStore, RoundTrips],
) -> None:
    store, trips = proxied
    warm = await answered(store, "warm")
    assert await store.take(warm, ran_with={"amount": 1})
    record = await answered(store, "root-1")
    assert await round_trips(trips, store.take(record, ran_with={"amount": 2})) == 1
    assert await round_trips(trips, store.take(record, ran_with={"amount": 3})) == 1
    [audit] = await store.find_pause_answers("acme", "root-1")
    assert audit.ran_with == {"amount": 2}  # the second take took nothing and noted nothing


async def test_ending_a_tree_where_nothing_waits_is_one_round_trip(
    proxied: tuple[SqlStore, RoundTrips],
) -> None:
    store, trips = proxied
    await answered(store, "warm")
    await store.end_tree("warm", ExecutionStatus.COMPLETED, NOW, release=claim("warm"))
    await answered(store, "root-1")  # its answer never taken: closed by the end, no entry more
    ending = store.end_tree("root-1", ExecutionStatus.COMPLETED, NOW, release=claim("root-1"))
    assert await round_trips(trips, ending) == 1
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.COMPLETED
    assert await store.list_by_root("root-1", [PauseStatus.RESOLVED]) == []
    assert len(await store.find_pause_answers("acme", "root-1")) == 1
    assert await store.start_tree(new_root("root-1"), claim("root-1", owner="b"))  # released


async def test_resting_a_paused_pass_is_one_round_trip(
    proxied: tuple[SqlStore, RoundTrips],
) -> None:
    store, trips = proxied
    rests = {}
    for root in ("warm", "root-1"):
        assert await store.start_tree(new_root(root), claim(root))
        await store.get_or_create(new_pause(f"{root}#0", root=root))
        resting = store.rest(root, {f"{root}#0": f"{root}-i"}, NOW, release=claim(root))
        rests[root] = await round_trips(trips, resting)
    assert rests["root-1"] == 1
    [pause] = await store.list_by_root("root-1", [PauseStatus.PENDING])
    assert pause.interrupt_id == "root-1-i"
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.PAUSED
    assert await store.start_tree(new_root("root-1"), claim("root-1", owner="b"))  # released


async def test_an_answer_opening_its_tree_is_one_round_trip(
    proxied: tuple[SqlStore, RoundTrips],
) -> None:
    """A click's write (``close_opening`` given the pause as read before the answer): the
    pause closed, its audit entry, the lease taken, the tree read and moved on — one statement,
    where the transaction costs seven round trips."""
    store, trips = proxied
    answer = Replied(answer=PauseAnswer(decision={"approved": True}, responder="m"))
    costs, opened = {}, {}
    for root in ("warm", "root-1"):
        assert await store.start_tree(new_root(root), claim(root))
        await store.get_or_create(new_pause(f"{root}#0", root=root))
        await store.rest(root, {f"{root}#0": f"{root}-i"}, NOW, release=claim(root))
        [known] = await store.list_by_root(root, [PauseStatus.PENDING])

        async def answering(root: str = root, known: PauseRecord = known) -> None:
            lease = claim(root, owner="b")
            opened[root] = await store.close_opening(
                known.pause_id, answer, at=NOW, tenant_id="acme", lease=lease, known=known
            )

        costs[root] = await round_trips(trips, answering())
    assert costs["root-1"] == 1
    closed = opened["root-1"]
    assert closed.record is not None and closed.record.status is PauseStatus.RESOLVED
    assert closed.tree is not None and [p.pause_id for p in closed.tree.pauses] == [
        closed.record.pause_id
    ]
    row = await store.get("root-1")
    assert row is not None and row.status is ExecutionStatus.RUNNING
    assert len(await store.find_pause_answers("acme", "root-1")) == 1
    assert not await store.start_tree(new_root("root-1"), claim("root-1", owner="c"))  # b's
