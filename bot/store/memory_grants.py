"""``Grants`` in memory: the same contract as ``SqlGrants`` (``tests/store/test_grants.py``)."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from bot.core.grants import Grant, NewGrant
from bot.store.repositories import Grants


class MemoryGrants(Grants):
    """``Grants`` in one process (a use is atomic: the event loop runs one call at a time)."""

    def __init__(self) -> None:
        self._grants: dict[str, Grant] = {}

    async def add(self, new: NewGrant) -> Grant:
        grant = Grant(
            grant_id=new.grant_id,
            tenant_id=new.tenant_id,
            role=new.role,
            tool=new.tool,
            granted_by=new.granted_by,
            scope=new.scope,
            constraint=new.constraint,
            created_at=new.created_at,
            expires_at=new.expires_at,
            max_uses=new.max_uses,
        )
        self._grants[grant.grant_id] = grant
        return grant

    async def get(self, tenant_id: str, grant_id: str) -> Grant | None:
        grant = self._grants.get(grant_id)
        return grant if grant is not None and grant.tenant_id == tenant_id else None

    async def list_grants(
        self, tenant_id: str | None, *, now: datetime, include_inactive: bool = False
    ) -> list[Grant]:
        return [
            g
            for g in sorted(self._grants.values(), key=lambda g: (g.created_at, g.grant_id))
            if (tenant_id is None or g.tenant_id == tenant_id)
            and (include_inactive or g.is_active(now))
        ]

    async def candidates(self, tenant_id: str, role: str, tool: str, now: datetime) -> list[Grant]:
        return [
            g
            for g in await self.list_grants(tenant_id, now=now)
            if (g.role, g.tool) == (role, tool)
        ]

    async def use(self, grant_id: str, now: datetime) -> bool:
        grant = self._grants.get(grant_id)
        if grant is None or not grant.is_active(now):
            return False
        self._grants[grant_id] = dataclasses.replace(grant, uses=grant.uses + 1)
        return True

    async def revoke(self, tenant_id: str, grant_id: str, *, by: str, at: datetime) -> bool:
        grant = await self.get(tenant_id, grant_id)
        if grant is None or grant.revoked_at is not None:
            return False
        self._grants[grant_id] = dataclasses.replace(grant, revoked_at=at, revoked_by=by)
        return True
