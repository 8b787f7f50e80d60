"""The grants store's contract, on SQLite, PostgreSQL and in memory alike: added, listed,
revoked, expired, used up; a use counted atomically — two instances racing for the last use of
a 1-use grant on PostgreSQL get exactly one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.grants import ArgumentConstraint, GrantScope, NewGrant
from bot.store.database import Database
from bot.store.grants import SqlGrants
from bot.store.memory_grants import MemoryGrants
from bot.store.repositories import Grants
from tests.databases import STORE_BACKENDS, database, postgres_database

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


@pytest.fixture(params=STORE_BACKENDS)
async def grants(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Grants]:
    if request.param == "memory":
        yield MemoryGrants()
        return
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        yield SqlGrants(opened)


def new_grant(
    grant_id: str = "g1",
    *,
    tenant: str = "acme",
    tool: str = "refund-card-tool",
    max_uses: int | None = None,
    expires_at: datetime = NOW + 8 * HOUR,
) -> NewGrant:
    return NewGrant(
        grant_id=grant_id,
        tenant_id=tenant,
        role="refund-approval-channel",
        tool=tool,
        granted_by="U0ANN",
        scope=GrantScope(owner_id="U0ANN", agent="office-agent"),
        constraint=ArgumentConstraint(equals={"currency": "EUR"}, at_most={"amount": 50.0}),
        created_at=NOW,
        expires_at=expires_at,
        max_uses=max_uses,
    )


async def test_a_grant_reads_back_as_added(grants: Grants) -> None:
    added = await grants.add(new_grant())
    assert added == await grants.get("acme", "g1")
    assert added.scope == GrantScope(owner_id="U0ANN", agent="office-agent")
    assert added.constraint == ArgumentConstraint(
        equals={"currency": "EUR"}, at_most={"amount": 50.0}
    )
    assert (added.uses, added.max_uses, added.revoked_at) == (0, None, None)
    assert added.expires_at == NOW + 8 * HOUR
    assert await grants.get("other", "g1") is None  # never another tenant's


async def test_candidates_are_the_active_grants_of_one_tenant_role_and_tool(
    grants: Grants,
) -> None:
    await grants.add(new_grant("g1"))
    await grants.add(new_grant("g2", tenant="globex"))
    await grants.add(new_grant("g3", tool="wire-money-tool"))
    await grants.add(new_grant("g4", expires_at=NOW + HOUR))
    found = await grants.candidates("acme", "refund-approval-channel", "refund-card-tool", NOW)
    assert [g.grant_id for g in found] == ["g1", "g4"]
    later = await grants.candidates(
        "acme", "refund-approval-channel", "refund-card-tool", NOW + HOUR
    )
    assert [g.grant_id for g in later] == ["g1"]  # g4 expired at its expiry
    assert [g.grant_id for g in await grants.list_grants(None, now=NOW)] == ["g1", "g2", "g3", "g4"]
    assert [g.grant_id for g in await grants.list_grants("acme", now=NOW + HOUR)] == ["g1", "g3"]
    listed = await grants.list_grants("acme", now=NOW + HOUR, include_inactive=True)
    assert [g.grant_id for g in listed] == ["g1", "g3", "g4"]


async def test_uses_are_counted_until_none_is_left(grants: Grants) -> None:
    await grants.add(new_grant(max_uses=2))
    assert await grants.use("g1", NOW)
    assert await grants.use("g1", NOW)
    assert not await grants.use("g1", NOW)
    used = await grants.get("acme", "g1")
    assert used is not None and used.uses == 2 and not used.is_active(NOW)
    assert await grants.candidates("acme", used.role, used.tool, NOW) == []


async def test_a_revoked_or_expired_grant_is_not_used(grants: Grants) -> None:
    await grants.add(new_grant("g1"))
    await grants.add(new_grant("g2", expires_at=NOW + HOUR))
    assert await grants.revoke("acme", "g1", by="U0BOSS", at=NOW)
    assert not await grants.revoke("acme", "g1", by="U0BOSS", at=NOW)  # once
    assert not await grants.revoke("globex", "g2", by="U0BOSS", at=NOW)  # not its tenant's
    assert not await grants.use("g1", NOW)
    assert not await grants.use("g2", NOW + HOUR)
    assert await grants.use("g2", NOW + HOUR - timedelta(seconds=1))
    revoked = await grants.get("acme", "g1")
    assert revoked is not None and (revoked.revoked_at, revoked.revoked_by) == (NOW, "U0BOSS")


@pytest.mark.postgres
async def test_two_instances_racing_for_the_last_use_on_postgres_get_exactly_one() -> None:
    async with (
        postgres_database() as url,
        Database.open(url) as first,
        Database.open(url) as second,
    ):
        await first.migrate(NOW)
        one, other = SqlGrants(first), SqlGrants(second)
        for round_ in range(20):
            grant_id = f"race-{round_}"
            await one.add(new_grant(grant_id, max_uses=1))
            won = await asyncio.gather(
                *(store.use(grant_id, NOW) for store in (one, other, one, other))
            )
            assert sorted(won) == [False, False, False, True], round_
            used = await other.get("acme", grant_id)
            assert used is not None and used.uses == 1
