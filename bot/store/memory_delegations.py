"""``Delegations`` in memory: the same contract as ``SqlDelegations``
(``tests/store/test_delegations_contract.py``)."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from bot.core.delegations import (
    Delegation,
    DelegationChange,
    DelegationChangeKind,
    NewDelegation,
    TellingTaken,
)
from bot.store.repositories import Delegations


class MemoryDelegations(Delegations):
    """``Delegations`` in one process."""

    def __init__(self) -> None:
        self._delegations: dict[str, Delegation] = {}
        self._told: set[tuple[str, DelegationChangeKind]] = set()
        self._held: dict[str, datetime] = {}  # a telling taken, until then

    async def add(self, new: NewDelegation) -> Delegation:
        delegation = Delegation(
            delegation_id=new.delegation_id,
            tenant_id=new.tenant_id,
            delegator=new.delegator,
            delegate=new.delegate,
            created_by=new.created_by,
            created_at=new.created_at,
            ends_at=new.ends_at,
        )
        self._delegations[delegation.delegation_id] = delegation
        return delegation

    async def get(self, tenant_id: str, delegation_id: str) -> Delegation | None:
        found = self._delegations.get(delegation_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    async def list_delegations(
        self, tenant_id: str | None, *, now: datetime, include_ended: bool = False
    ) -> list[Delegation]:
        return [
            d
            for d in sorted(
                self._delegations.values(), key=lambda d: (d.created_at, d.delegation_id)
            )
            if (tenant_id is None or d.tenant_id == tenant_id)
            and (include_ended or d.is_active(now))
        ]

    async def active_for(self, tenant_id: str, delegate: str, now: datetime) -> list[Delegation]:
        return [
            d for d in await self.list_delegations(tenant_id, now=now) if d.delegate == delegate
        ]

    async def end(self, tenant_id: str, delegation_id: str, *, by: str, at: datetime) -> bool:
        found = await self.get(tenant_id, delegation_id)
        if found is None or found.ended_at is not None:
            return False
        self._delegations[delegation_id] = dataclasses.replace(found, ended_at=at, ended_by=by)
        return True

    async def untold(self, now: datetime, *, limit: int) -> list[DelegationChange]:
        owed: list[DelegationChange] = []
        for d in await self.list_delegations(None, now=now, include_ended=True):
            if self._held.get(d.delegation_id, now) > now:
                continue  # its telling is held by a taker now
            start_told = (d.delegation_id, "started") in self._told
            if not start_told and d.is_active(now):
                owed.append(DelegationChange(kind="started", delegation=d))
            elif (
                start_told
                and d.ended_at is not None
                and (d.delegation_id, "ended") not in self._told
            ):
                owed.append(DelegationChange(kind="ended", delegation=d))
        return owed[:limit]

    async def take_telling(
        self,
        tenant_id: str,
        delegation_id: str,
        kind: DelegationChangeKind,
        *,
        now: datetime,
        until: datetime,
    ) -> TellingTaken | None:
        if await self.get(tenant_id, delegation_id) is None or (delegation_id, kind) in self._told:
            return None
        held = self._held.get(delegation_id)
        if held is not None and held > now:
            return None
        self._held[delegation_id] = until
        return "first" if held is None else "again"

    async def mark_told(
        self, tenant_id: str, delegation_id: str, kind: DelegationChangeKind, *, at: datetime
    ) -> bool:
        if await self.get(tenant_id, delegation_id) is None or (delegation_id, kind) in self._told:
            return False
        self._told.add((delegation_id, kind))
        self._held.pop(delegation_id, None)
        return True
