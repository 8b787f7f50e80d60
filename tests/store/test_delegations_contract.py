"""Standing delegations and handovers in the store, on SQLite, PostgreSQL and in memory alike."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.core.delegations import Handover, NewDelegation
from bot.store.closings import Withdrawn
from bot.store.database import Database
from bot.store.delegations import SqlDelegations
from bot.store.memory_delegations import MemoryDelegations
from bot.store.migrations import MIGRATIONS
from bot.store.repositories import Delegations, PauseStore
from tests.databases import STORE_BACKENDS, database
from tests.store.test_contract import NOW, new_pause, store

__all__ = ["store"]  # the pause store's fixture, run on every backend

DAY = timedelta(days=1)


@pytest.fixture(params=STORE_BACKENDS)
async def delegations(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Delegations]:
    if request.param == "memory":
        yield MemoryDelegations()
        return
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        assert await opened.migrate(NOW) == len(MIGRATIONS)
        yield SqlDelegations(opened)


def new(delegation_id: str, *, delegate: str = "bob", tenant: str = "acme") -> NewDelegation:
    return NewDelegation(
        delegation_id=delegation_id,
        tenant_id=tenant,
        delegator="ann",
        delegate=delegate,
        created_by="ann",
        created_at=NOW,
        ends_at=NOW + DAY,
    )


async def test_a_delegation_is_active_until_its_end_or_until_ended(
    delegations: Delegations,
) -> None:
    added = await delegations.add(new("d-1"))
    await delegations.add(new("d-2", delegate="cid"))
    await delegations.add(new("d-3", tenant="other"))
    assert added.is_active(NOW) and not added.is_active(NOW + DAY)
    assert [d.delegation_id for d in await delegations.active_for("acme", "bob", NOW)] == ["d-1"]
    assert await delegations.active_for("acme", "bob", NOW + DAY) == []  # its end: over
    listed = await delegations.list_delegations("acme", now=NOW)
    assert [d.delegation_id for d in listed] == ["d-1", "d-2"]
    assert len(await delegations.list_delegations(None, now=NOW)) == 3

    assert await delegations.end("acme", "d-1", by="ann", at=NOW + timedelta(hours=1))
    assert not await delegations.end("acme", "d-1", by="ann", at=NOW + timedelta(hours=2))
    assert not await delegations.end("other", "d-2", by="x", at=NOW)  # another tenant's: no
    assert await delegations.active_for("acme", "bob", NOW + timedelta(hours=1)) == []
    ended = await delegations.get("acme", "d-1")
    assert ended is not None and ended.ended_by == "ann"
    everything = await delegations.list_delegations("acme", now=NOW, include_ended=True)
    assert [d.delegation_id for d in everything] == ["d-1", "d-2"]


async def test_handovers_are_written_over_the_version_read_and_kept_in_the_audit(
    store: PauseStore,
) -> None:
    record = await store.get_or_create(new_pause("h1"))
    handover = Handover(by="ann", to="bob", at=NOW.isoformat())
    written = await store.record_handover(
        record.pause_id, handover, tenant_id="acme", version=0, at=NOW
    )
    assert written is not None and written.handovers == (handover,)
    assert written.approvals.version == 1  # one version for approvals and handovers
    found = await store.find("acme", record.pause_id)
    assert found is not None and found.approvals.version == 1
    stale = Handover(by="ann", to="cid", at=NOW.isoformat())
    assert (
        await store.record_handover(record.pause_id, stale, tenant_id="acme", version=0, at=NOW)
        is None
    )
    assert await store.close(record.pause_id, Withdrawn(), at=NOW) is not None
    [entry] = await store.find_pause_answers("acme", "root-1")
    assert entry.handovers == (handover,)
    closed = Handover(by="ann", to="dan", at=NOW.isoformat())
    assert (
        await store.record_handover(record.pause_id, closed, tenant_id="acme", version=1, at=NOW)
        is None
    )


async def test_what_delegates_are_owed_is_taken_once_start_then_early_end(
    delegations: Delegations,
) -> None:
    """A start is owed while the delegation is active, an early end once its start was told;
    taking one is one conditional write (a second taker gets False)."""
    await delegations.add(new("d-1"))
    await delegations.add(new("d-2", delegate="cid"))
    owed = await delegations.untold(NOW, limit=10)
    assert [(c.kind, c.delegation.delegation_id) for c in owed] == [
        ("started", "d-1"),
        ("started", "d-2"),
    ]
    assert await delegations.mark_told("acme", "d-1", "started", at=NOW)
    assert not await delegations.mark_told("acme", "d-1", "started", at=NOW)  # taken already
    assert not await delegations.mark_told("other", "d-2", "started", at=NOW)  # not its tenant
    assert [c.delegation.delegation_id for c in await delegations.untold(NOW, limit=10)] == ["d-2"]
    assert len(await delegations.untold(NOW, limit=1)) == 1

    assert await delegations.end("acme", "d-1", by="ann", at=NOW)
    assert await delegations.end("acme", "d-2", by="ann", at=NOW)  # its start never told
    owed = await delegations.untold(NOW, limit=10)
    assert [(c.kind, c.delegation.delegation_id) for c in owed] == [("ended", "d-1")]
    assert owed[0].delegation.ended_by == "ann"
    assert await delegations.mark_told("acme", "d-1", "ended", at=NOW)
    assert await delegations.untold(NOW, limit=10) == []


async def test_a_telling_is_held_by_its_taker_and_taken_again_once_the_hold_lapsed(
    delegations: Delegations,
) -> None:
    """Told at least once: a taker that never recorded it told (it died) leaves it owed, to be
    taken ``again`` after its hold; while held, nobody else takes it nor is it listed owed."""
    await delegations.add(new("d-1"))
    hold = timedelta(seconds=60)
    assert await delegations.take_telling("acme", "d-1", "started", now=NOW, until=NOW + hold) == (
        "first"
    )
    later = NOW + timedelta(seconds=30)
    assert (
        await delegations.take_telling("acme", "d-1", "started", now=later, until=later + hold)
        is None
    )
    assert await delegations.untold(later, limit=10) == []  # held: not owed to a sweep now
    assert await delegations.take_telling("other", "d-1", "started", now=NOW, until=NOW) is None

    lapsed = NOW + hold
    [owed] = await delegations.untold(lapsed, limit=10)  # its taker died: owed again
    assert owed.kind == "started"
    assert (
        await delegations.take_telling("acme", "d-1", "started", now=lapsed, until=lapsed + hold)
        == "again"
    )
    assert await delegations.mark_told("acme", "d-1", "started", at=lapsed)
    assert (
        await delegations.take_telling(
            "acme", "d-1", "started", now=lapsed + DAY, until=lapsed + DAY
        )
        is None
    )  # told: never again

    assert await delegations.end("acme", "d-1", by="ann", at=lapsed)
    assert await delegations.take_telling(
        "acme", "d-1", "ended", now=lapsed, until=lapsed + hold
    ) == (
        "first"  # the end is a telling of its own, free once the start was told
    )
    assert await delegations.untold(lapsed, limit=10) == []
    assert await delegations.mark_told("acme", "d-1", "ended", at=lapsed)
    assert await delegations.untold(lapsed + DAY, limit=10) == []
