"""``Grants`` on a database: the ``cs_grants`` table (v12), one short statement per call.

A use is one conditional ``UPDATE`` (``uses = uses + 1`` only while the grant is unrevoked,
unexpired and has a use left): PostgreSQL re-checks the condition on the row it locked, so two
instances racing for a grant's last use get exactly one. The constraint on the arguments is
written through the payload codec (it may quote customer data, like every payload we keep).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, RowMapping, and_, insert, or_, select, update

from bot.core.grants import ArgumentConstraint, Grant, GrantScope, NewGrant
from bot.store.codec import JsonCodec, PayloadCodec
from bot.store.database import Database
from bot.store.tables import grants
from bot.store.transactions import Transactions


def _active(now: datetime) -> Any:
    return and_(
        grants.c.revoked_at.is_(None),
        grants.c.expires_at > now,
        or_(grants.c.max_uses.is_(None), grants.c.uses < grants.c.max_uses),
    )


def use_grant(connection: Connection, grant_id: str, now: datetime) -> bool:
    """Count one use of the grant, if it is active at ``now``: whether it was (one conditional
    ``UPDATE``; in the caller's transaction, e.g. the one closing the pause it decided)."""
    statement = (
        update(grants)
        .where(and_(grants.c.grant_id == grant_id, _active(now)))
        .values(uses=grants.c.uses + 1)
    )
    return bool(connection.execute(statement).rowcount == 1)


class SqlGrants:
    """``Grants`` on ``database``; constraints written with ``codec``."""

    def __init__(self, database: Database, codec: PayloadCodec | None = None) -> None:
        self._tx: Transactions = database.transactions
        self._codec: PayloadCodec = codec or JsonCodec()

    async def add(self, new: NewGrant) -> Grant:
        values = {
            "grant_id": new.grant_id,
            "tenant_id": new.tenant_id,
            "role": new.role,
            "tool": new.tool,
            "granted_by": new.granted_by,
            "scope_thread_id": new.scope.thread_id,
            "scope_owner_id": new.scope.owner_id,
            "scope_agent": new.scope.agent,
            "argument_constraint": self._codec.encode(
                {"equals": dict(new.constraint.equals), "at_most": dict(new.constraint.at_most)}
            ),
            "created_at": new.created_at,
            "expires_at": new.expires_at,
            "max_uses": new.max_uses,
            "uses": 0,
        }
        await self._tx.apply(lambda connection: connection.execute(insert(grants), values))
        found = await self.get(new.tenant_id, new.grant_id)
        assert found is not None
        return found

    async def get(self, tenant_id: str, grant_id: str) -> Grant | None:
        statement = select(grants).where(
            and_(grants.c.tenant_id == tenant_id, grants.c.grant_id == grant_id)
        )
        row = await self._tx.read(lambda c: c.execute(statement).mappings().first())
        return None if row is None else self._grant(row)

    async def list_grants(
        self, tenant_id: str | None, *, now: datetime, include_inactive: bool = False
    ) -> list[Grant]:
        statement = select(grants).order_by(grants.c.created_at, grants.c.grant_id)
        if tenant_id is not None:
            statement = statement.where(grants.c.tenant_id == tenant_id)
        if not include_inactive:
            statement = statement.where(_active(now))
        rows = await self._tx.read(lambda c: c.execute(statement).mappings().all())
        return [self._grant(row) for row in rows]

    async def candidates(self, tenant_id: str, role: str, tool: str, now: datetime) -> list[Grant]:
        statement = (
            select(grants)
            .where(
                and_(
                    grants.c.tenant_id == tenant_id,
                    grants.c.role == role,
                    grants.c.tool == tool,
                    _active(now),
                )
            )
            .order_by(grants.c.created_at, grants.c.grant_id)
        )
        rows = await self._tx.read(lambda c: c.execute(statement).mappings().all())
        return [self._grant(row) for row in rows]

    async def use(self, grant_id: str, now: datetime) -> bool:
        return await self._tx.write(lambda connection: use_grant(connection, grant_id, now))

    async def revoke(self, tenant_id: str, grant_id: str, *, by: str, at: datetime) -> bool:
        statement = (
            update(grants)
            .where(
                and_(
                    grants.c.tenant_id == tenant_id,
                    grants.c.grant_id == grant_id,
                    grants.c.revoked_at.is_(None),
                )
            )
            .values(revoked_at=at, revoked_by=by)
        )

        def body(connection: Connection) -> bool:
            return bool(connection.execute(statement).rowcount == 1)

        return await self._tx.write(body)

    def _grant(self, row: RowMapping) -> Grant:
        constraint = self._codec.decode(row["argument_constraint"])
        return Grant(
            grant_id=row["grant_id"],
            tenant_id=row["tenant_id"],
            role=row["role"],
            tool=row["tool"],
            granted_by=row["granted_by"],
            scope=GrantScope(
                thread_id=row["scope_thread_id"],
                owner_id=row["scope_owner_id"],
                agent=row["scope_agent"],
            ),
            constraint=ArgumentConstraint(
                equals=constraint.get("equals", {}), at_most=constraint.get("at_most", {})
            ),
            created_at=row["created_at"],
            expires_at=row["expires_at"],
            max_uses=row["max_uses"],
            uses=row["uses"],
            revoked_at=row["revoked_at"],
            revoked_by=row["revoked_by"],
        )
