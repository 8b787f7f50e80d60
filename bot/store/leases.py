"""Tree leases: one pass per execution tree across instances, with an expiry on the clock.

A lease is a row (root execution, owner, expiry). Taking it is an insert, or an update that
succeeds only when the row is expired or already ours — one statement each, so two instances
never both hold it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, and_, delete, or_, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from bot.store.tables import leases
from bot.store.transactions import Transactions


def take_lease(
    connection: Connection, root: str, owner: str, now: datetime, ttl: timedelta
) -> bool:
    """In the caller's transaction: take the lease if it is free, expired or already ``owner``'s."""
    insert = postgresql_insert if connection.dialect.name == "postgresql" else sqlite_insert
    taken = connection.execute(
        insert(leases)
        .values(root_execution_id=root, owner=owner, acquired_at=now, expires_at=now + ttl)
        .on_conflict_do_nothing(index_elements=["root_execution_id"])
    )
    if taken.rowcount == 1:
        return True
    result = connection.execute(
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


def release_lease(connection: Connection, root: str, owner: str) -> None:
    """In the caller's transaction: give the lease up if it is still ``owner``'s."""
    connection.execute(
        delete(leases).where(and_(leases.c.root_execution_id == root, leases.c.owner == owner))
    )


class SqlLeases:
    def __init__(self, transactions: Transactions) -> None:
        self._tx = transactions

    async def try_take(self, root: str, owner: str, now: datetime, ttl: timedelta) -> bool:
        """Take the lease if it is free, expired or already ``owner``'s."""
        return await self._tx.write(lambda c: take_lease(c, root, owner, now, ttl))

    async def renew(self, root: str, owner: str, now: datetime, ttl: timedelta) -> bool:
        """Push the expiry on; False if the lease is no longer ``owner``'s."""

        def body(connection: Connection) -> bool:
            result = connection.execute(
                update(leases)
                .where(and_(leases.c.root_execution_id == root, leases.c.owner == owner))
                .values(expires_at=now + ttl)
            )
            return result.rowcount == 1

        return await self._tx.write(body)

    async def release(self, root: str, owner: str) -> None:
        await self._tx.write(lambda c: release_lease(c, root, owner))

    async def live_roots(self, now: datetime) -> set[str]:
        """Roots whose lease has not expired (a pass runs there)."""
        statement = select(leases.c.root_execution_id).where(leases.c.expires_at >= now)
        rows = await self._tx.read(lambda c: c.execute(statement).all())
        return {row[0] for row in rows}
