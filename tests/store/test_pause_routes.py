"""Where a policy routed a question is kept with the pause (``cs_pauses.route``, v14), on
SQLite, PostgreSQL and in memory: only while it waits unsent, with the times its timing gives
it, read back whole by every instance."""

from __future__ import annotations

from datetime import timedelta

from bot.core.routes import PauseRoute
from bot.core.timing import PauseTiming
from bot.store.closings import Withdrawn
from bot.store.repositories import PauseStore
from tests.store.test_contract import NOW, new_pause, store

__all__ = ["store"]  # the contract's fixture: every backend

ROUTE = PauseRoute(
    approvers=("U0BOSS", "S0BOARD"),
    conversation="C0BOSS",
    timing=PauseTiming(remind_after=timedelta(minutes=10), expire_after=timedelta(hours=1)),
)


async def test_a_route_is_kept_with_its_times_and_read_back(store: PauseStore) -> None:
    record = await store.get_or_create(new_pause("k1"))
    assert record.route is None
    routed = await store.set_route(
        record.pause_id,
        ROUTE,
        closes_at=NOW + timedelta(hours=1),
        nudge_at=NOW + timedelta(minutes=10),
    )
    assert routed is not None and routed.route == ROUTE
    found = await store.find("acme", record.pause_id)
    assert found is not None and found.route == ROUTE
    assert (found.closes_at, found.nudge_at) == (
        NOW + timedelta(hours=1),
        NOW + timedelta(minutes=10),
    )


async def test_no_route_once_sent_or_closed(store: PauseStore) -> None:
    sent = await store.get_or_create(new_pause("k1"))
    await store.mark_sent(sent.pause_id)
    assert await store.set_route(sent.pause_id, ROUTE, closes_at=None, nudge_at=None) is None
    closed = await store.get_or_create(new_pause("k2"))
    await store.close(closed.pause_id, Withdrawn(), at=NOW)
    assert await store.set_route(closed.pause_id, ROUTE, closes_at=None, nudge_at=None) is None
    found = await store.find("acme", sent.pause_id)
    assert found is not None and found.route is None
