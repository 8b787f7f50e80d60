"""Tree leases: one pass per execution tree across instances, with an expiry on the clock.

A lease is a row (root execution, owner, expiry). Taking it is an insert, or an update that
succeeds only when the row is expired or already ours — one statement each, so two instances
never both hold it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, select

from bot.store import direct
from bot.store.database import Database
from bot.store.statements import (
    INSERT_LEASE_UNLESS_PRESENT,
    LEASE_OWNER,
    RELEASE_LEASE,
    RENEW_LEASE,
    TAKE_LEASE,
)
from bot.store.tables import leases
from bot.store.transactions import Transactions


@dataclass(frozen=True, slots=True)
class LeaseClaim:
    """One holder's claim on one tree's lease; its methods run inside the caller's transaction,
    so taking or giving up the lease can share a transaction with the pass's first or last
    write. ``on_takeover`` hears of each time it took over another owner's expired lease."""

    root: str
    owner: str
    now: datetime
    ttl: timedelta
    on_takeover: Callable[[], None] | None = field(default=None, compare=False, repr=False)

    def take(self, connection: Connection) -> bool:
        """Take the lease if it is free, expired or already ``owner``'s; False if another
        owner's lease is live. A free lease (the usual case: a pass gives it up as it ends) is
        one insert; a held one is read, then taken by one conditional statement, so two takers
        never both get it."""
        values = {
            "root_execution_id": self.root,
            "owner": self.owner,
            "acquired_at": self.now,
            "expires_at": self.now + self.ttl,
        }
        if direct.execute(connection, INSERT_LEASE_UNLESS_PRESENT, values) == 1:
            return True
        holder = connection.execute(LEASE_OWNER, {"b_root": self.root}).scalar()
        taken = connection.execute(TAKE_LEASE, values).rowcount == 1
        if taken and holder is not None and holder != self.owner:
            self.took_over()
        return taken

    def took_over(self) -> None:
        """This claim took another owner's expired lease (a holder that died or stalled)."""
        if self.on_takeover is not None:
            self.on_takeover()

    def renew(self, connection: Connection) -> bool:
        """Push the expiry on; False if the lease is no longer ``owner``'s."""
        renewed = connection.execute(
            RENEW_LEASE,
            {"b_root": self.root, "b_owner": self.owner, "expires_at": self.now + self.ttl},
        )
        return renewed.rowcount == 1

    def release(self, connection: Connection) -> None:
        """Give the lease up if it is still ``owner``'s."""
        direct.execute(connection, RELEASE_LEASE, {"b_root": self.root, "b_owner": self.owner})


def lease_values(claim: LeaseClaim) -> dict[str, Any]:
    """A claim's values for ``bot.store.one_statement``'s lease parts (``l_*``)."""
    return {
        "l_root": claim.root,
        "l_owner": claim.owner,
        "l_acquired_at": claim.now,
        "l_expires_at": claim.now + claim.ttl,
    }


class SqlLeases:
    def __init__(self, database: Database) -> None:
        self._tx: Transactions = database.transactions

    async def try_take(self, claim: LeaseClaim) -> bool:
        """Take the lease alone, without a pass's first write (a pass takes it in
        ``start_tree``/``open_tree``): free, expired or already the claim's owner's."""
        return await self._tx.apply(claim.take, short=True)

    async def renew(self, claim: LeaseClaim) -> bool:
        """Push the expiry to ``claim.now + ttl``; False if the lease is no longer the owner's."""
        return await self._tx.apply(claim.renew, short=True)

    async def release(self, claim: LeaseClaim) -> None:
        await self._tx.apply(claim.release, short=True)

    async def live_roots(self, now: datetime) -> set[str]:
        """Roots whose lease has not expired (a pass runs there)."""
        statement = select(leases.c.root_execution_id).where(leases.c.expires_at >= now)
        rows = await self._tx.read(lambda c: c.execute(statement).all())
        return {row[0] for row in rows}
