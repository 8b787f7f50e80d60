"""``Delegations`` on a database: the ``cs_delegations`` table (v17; told marks v18; the hold
on a telling v20), one short statement per call. Ending a delegation is one conditional
``UPDATE`` (only while it has not ended), and so are taking the telling of its start or end
(only while it is untold and nobody holds it) and recording it told."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, RowMapping, and_, insert, select, update

from bot.core.delegations import (
    Delegation,
    DelegationChange,
    DelegationChangeKind,
    NewDelegation,
    TellingTaken,
)
from bot.store.database import Database
from bot.store.tables import delegations
from bot.store.transactions import Transactions


def _active(now: datetime) -> Any:
    return and_(
        delegations.c.ended_at.is_(None),
        delegations.c.created_at <= now,
        delegations.c.ends_at > now,
    )


_ORDER = (delegations.c.created_at, delegations.c.delegation_id)


class SqlDelegations:
    """``Delegations`` on ``database``."""

    def __init__(self, database: Database) -> None:
        self._tx: Transactions = database.transactions

    async def add(self, new: NewDelegation) -> Delegation:
        values = {
            "delegation_id": new.delegation_id,
            "tenant_id": new.tenant_id,
            "delegator": new.delegator,
            "delegate": new.delegate,
            "created_by": new.created_by,
            "created_at": new.created_at,
            "ends_at": new.ends_at,
        }
        await self._tx.apply(lambda c: c.execute(insert(delegations), values))
        found = await self.get(new.tenant_id, new.delegation_id)
        assert found is not None
        return found

    async def get(self, tenant_id: str, delegation_id: str) -> Delegation | None:
        statement = select(delegations).where(
            and_(
                delegations.c.tenant_id == tenant_id,
                delegations.c.delegation_id == delegation_id,
            )
        )
        row = await self._tx.read(lambda c: c.execute(statement).mappings().first())
        return None if row is None else _delegation(row)

    async def list_delegations(
        self, tenant_id: str | None, *, now: datetime, include_ended: bool = False
    ) -> list[Delegation]:
        statement = select(delegations).order_by(*_ORDER)
        if tenant_id is not None:
            statement = statement.where(delegations.c.tenant_id == tenant_id)
        if not include_ended:
            statement = statement.where(_active(now))
        rows = await self._tx.read(lambda c: c.execute(statement).mappings().all())
        return [_delegation(row) for row in rows]

    async def active_for(self, tenant_id: str, delegate: str, now: datetime) -> list[Delegation]:
        statement = (
            select(delegations)
            .where(
                and_(
                    delegations.c.tenant_id == tenant_id,
                    delegations.c.delegate == delegate,
                    _active(now),
                )
            )
            .order_by(*_ORDER)
        )
        rows = await self._tx.read(lambda c: c.execute(statement).mappings().all())
        return [_delegation(row) for row in rows]

    async def end(self, tenant_id: str, delegation_id: str, *, by: str, at: datetime) -> bool:
        statement = (
            update(delegations)
            .where(
                and_(
                    delegations.c.tenant_id == tenant_id,
                    delegations.c.delegation_id == delegation_id,
                    delegations.c.ended_at.is_(None),
                )
            )
            .values(ended_at=at, ended_by=by)
        )

        def body(connection: Connection) -> bool:
            return bool(connection.execute(statement).rowcount == 1)

        return await self._tx.write(body)

    async def untold(self, now: datetime, *, limit: int) -> list[DelegationChange]:
        c = delegations.c
        started = and_(c.started_told_at.is_(None), _active(now))
        ended = and_(
            c.ended_at.is_not(None), c.ended_told_at.is_(None), c.started_told_at.is_not(None)
        )
        free = c.telling_until.is_(None) | (c.telling_until <= now)
        statement = (
            select(delegations).where((started | ended) & free).order_by(*_ORDER).limit(limit)
        )
        rows = await self._tx.read(lambda c: c.execute(statement).mappings().all())
        return [
            DelegationChange(
                kind="started" if row["started_told_at"] is None else "ended",
                delegation=_delegation(row),
            )
            for row in rows
        ]

    async def take_telling(
        self,
        tenant_id: str,
        delegation_id: str,
        kind: DelegationChangeKind,
        *,
        now: datetime,
        until: datetime,
    ) -> TellingTaken | None:
        untold = _untold(tenant_id, delegation_id, kind)
        held = delegations.c.telling_until
        first = update(delegations).where(and_(untold, held.is_(None))).values(telling_until=until)
        lapsed = update(delegations).where(and_(untold, held <= now)).values(telling_until=until)

        def body(connection: Connection) -> TellingTaken | None:
            if connection.execute(first).rowcount == 1:
                return "first"
            return "again" if connection.execute(lapsed).rowcount == 1 else None

        return await self._tx.apply(body)

    async def mark_told(
        self, tenant_id: str, delegation_id: str, kind: DelegationChangeKind, *, at: datetime
    ) -> bool:
        column = _told_column(kind)
        statement = (
            update(delegations)
            .where(_untold(tenant_id, delegation_id, kind))
            .values({column.name: at, "telling_until": None})
        )

        def body(connection: Connection) -> bool:
            return bool(connection.execute(statement).rowcount == 1)

        return await self._tx.write(body)


def _told_column(kind: DelegationChangeKind) -> Any:
    return delegations.c.started_told_at if kind == "started" else delegations.c.ended_told_at


def _untold(tenant_id: str, delegation_id: str, kind: DelegationChangeKind) -> Any:
    return and_(
        delegations.c.tenant_id == tenant_id,
        delegations.c.delegation_id == delegation_id,
        _told_column(kind).is_(None),
    )


def _delegation(row: RowMapping) -> Delegation:
    return Delegation(
        delegation_id=row["delegation_id"],
        tenant_id=row["tenant_id"],
        delegator=row["delegator"],
        delegate=row["delegate"],
        created_by=row["created_by"],
        created_at=row["created_at"],
        ends_at=row["ends_at"],
        ended_at=row["ended_at"],
        ended_by=row["ended_by"],
    )
