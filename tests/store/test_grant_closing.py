"""A decision by a grant closes the pause and counts the grant's use in one transaction, on
SQLite, PostgreSQL and in memory (issue 28 item 4): both or neither — a grant with no use left
closes nothing (``GrantUnavailable``, the pause still waits), a pause closed meanwhile uses
nothing, and of racers for a 1-use grant on several pauses exactly one pause is decided."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.core.enums import PauseResolution, PauseStatus
from bot.store.closings import DecidedAtOnce, GrantUnavailable, Withdrawn
from bot.store.database import Database
from bot.store.grants import SqlGrants
from bot.store.memory import MemoryStore
from bot.store.records import PauseAnswer
from bot.store.repositories import Grants, PauseStore
from bot.store.sql import SqlStore
from tests.databases import STORE_BACKENDS, database
from tests.store.test_contract import NOW, new_pause
from tests.store.test_grants import new_grant


@dataclass
class Stores:
    pauses: PauseStore
    grants: Grants


@pytest.fixture(params=STORE_BACKENDS)
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    if request.param == "memory":
        memory = MemoryStore()
        yield Stores(pauses=memory, grants=memory.grants)
        return
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        yield Stores(pauses=SqlStore(opened), grants=SqlGrants(opened))


def by_grant(grant_id: str) -> DecidedAtOnce:
    answer = PauseAnswer(decision={"approved": True}, responder=f"grant:{grant_id}:U0ANN")
    return DecidedAtOnce(answer=answer, grant_id=grant_id)


async def test_the_closing_counts_the_use(stores: Stores) -> None:
    await stores.grants.add(new_grant("g1", max_uses=2))
    record = await stores.pauses.get_or_create(new_pause("k1"))
    closed = await stores.pauses.close(record.pause_id, by_grant("g1"), at=NOW)
    assert closed is not None and closed.resolution is PauseResolution.DECIDED
    grant = await stores.grants.get("acme", "g1")
    assert grant is not None and grant.uses == 1


async def test_a_used_up_grant_closes_nothing(stores: Stores) -> None:
    await stores.grants.add(new_grant("g1", max_uses=1))
    assert await stores.grants.use("g1", NOW)  # its one use is gone
    record = await stores.pauses.get_or_create(new_pause("k1"))
    with pytest.raises(GrantUnavailable):
        await stores.pauses.close(record.pause_id, by_grant("g1"), at=NOW)
    still = await stores.pauses.find("acme", record.pause_id)
    assert still is not None and still.status is PauseStatus.PENDING
    # and no audit entry was written: the pause closes later as anything else
    assert await stores.pauses.close(record.pause_id, Withdrawn(), at=NOW) is not None


async def test_a_pause_closed_meanwhile_uses_nothing(stores: Stores) -> None:
    await stores.grants.add(new_grant("g1", max_uses=1))
    record = await stores.pauses.get_or_create(new_pause("k1"))
    assert await stores.pauses.close(record.pause_id, Withdrawn(), at=NOW) is not None
    assert await stores.pauses.close(record.pause_id, by_grant("g1"), at=NOW) is None
    grant = await stores.grants.get("acme", "g1")
    assert grant is not None and grant.uses == 0  # the use is still there


async def test_racers_for_a_one_use_grant_decide_exactly_one_pause(stores: Stores) -> None:
    await stores.grants.add(new_grant("g1", max_uses=1))
    records = [await stores.pauses.get_or_create(new_pause(f"k{n}")) for n in range(4)]

    async def decide(pause_id: str) -> bool:
        try:
            return await stores.pauses.close(pause_id, by_grant("g1"), at=NOW) is not None
        except GrantUnavailable:
            return False

    won = await asyncio.gather(*(decide(r.pause_id) for r in records))
    assert sum(won) == 1
    waiting = [await stores.pauses.find("acme", r.pause_id) for r in records]
    assert sum(1 for w in waiting if w is not None and w.status is PauseStatus.PENDING) == 3
