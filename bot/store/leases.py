"""Tree leases: one pass per execution tree across instances, with an expiry on the clock.

A lease is a row (root execution, owner, expiry). Taking it is an insert, or an update that
succeeds only when the row is expired or already ours — one statement each, so two instances
never both hold it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.tables import leases


class SqlLeases:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def try_take(self, root: str, owner: str, now: datetime, ttl: timedelta) -> bool:
        """Take the lease if it is free, expired or already ``owner``'s."""
        try:
            async with self._engine.begin() as connection:
                await connection.execute(
                    insert(leases).values(
                        root_execution_id=root, owner=owner, acquired_at=now, expires_at=now + ttl
                    )
                )
            return True
        except IntegrityError:
            pass
        async with self._engine.begin() as connection:
            result = await connection.execute(
                update(leases)
                .where(
                    and_(
                        leases.c.root_execution_id == root,
                        or_(leases.c.expires_at < now, leases.c.owner == owner),
                    )
                )
                .values(owner=owner, acquired_at=now, expires_at=now + ttl)
            )
            return result.rowcount == 1

    async def renew(self, root: str, owner: str, now: datetime, ttl: timedelta) -> bool:
        """Push the expiry on; False if the lease is no longer ``owner``'s."""
        async with self._engine.begin() as connection:
            result = await connection.execute(
                update(leases)
                .where(and_(leases.c.root_execution_id == root, leases.c.owner == owner))
                .values(expires_at=now + ttl)
            )
            return result.rowcount == 1

    async def release(self, root: str, owner: str) -> None:
        async with self._engine.begin() as connection:
            await connection.execute(
                delete(leases).where(
                    and_(leases.c.root_execution_id == root, leases.c.owner == owner)
                )
            )

    async def live_roots(self, now: datetime) -> set[str]:
        """Roots whose lease has not expired (a pass runs there)."""
        async with self._engine.connect() as connection:
            rows = await connection.execute(
                select(leases.c.root_execution_id).where(leases.c.expires_at >= now)
            )
            return {row[0] for row in rows}
