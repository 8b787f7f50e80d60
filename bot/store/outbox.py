"""What the channels owe people, on the App's one ``Database`` (``cs_outbox``: v14).

A channel records a thing it must say (a note to a requester, a line in a thread, an update of
a message, a run's end) before saying it, and forgets it once said; what an outage stopped is
still there, and a worker says it later. Several instances share the table: an entry is
*claimed* by moving its ``due_at`` on (one conditional UPDATE), so one instance tries it at a
time, and an instance that dies holding a claim leaves it to be tried again once the claim
lapses (``attempts`` then says it may have been said: look before saying it again).

The payload is written through the App's codec: sealed at rest, resealed by ``reencrypt``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, RowMapping, and_, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from bot.store.codec import JsonCodec, PayloadCodec
from bot.store.database import Database
from bot.store.tables import outbox
from bot.store.transactions import Transactions


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxEntry:
    """One thing a channel owes."""

    entry_id: str
    """The owner's key for it: owing the same thing twice is owing it once."""
    channel: str
    """Whose it is (``"slack"``): each channel's worker takes its own."""
    kind: str
    """What it is, in the channel's words (``"post"``, ``"update"``...)."""
    tenant_id: str
    pause_id: str | None
    """The question it is about, if any (a thing can be moot once its question closed)."""
    payload: Mapping[str, Any]
    """What to say and where (sealed at rest)."""
    due_at: datetime
    created_at: datetime
    attempts: int = 0
    """How often it was claimed: more than once, it may have been said already."""
    last_error: str | None = None


class SqlOutbox:
    """The outbox on ``database``; payloads written with ``codec``."""

    def __init__(self, database: Database, codec: PayloadCodec | None = None) -> None:
        self._tx: Transactions = database.transactions
        self._codec: PayloadCodec = codec or JsonCodec()

    async def owe(self, entry: OutboxEntry) -> bool:
        """Record ``entry``; ``False`` when an entry of that id is owed already (kept)."""
        values = self._row(entry)
        try:
            await self._tx.apply(lambda connection: connection.execute(insert(outbox), values))
        except IntegrityError:
            return False
        return True

    async def get(self, entry_id: str) -> OutboxEntry | None:
        query = select(outbox).where(outbox.c.entry_id == entry_id)
        row = await self._tx.read(lambda connection: connection.execute(query).first())
        return None if row is None else self._entry(row._mapping)

    async def claim_due(
        self, channel: str, *, now: datetime, until: datetime, limit: int = 50
    ) -> list[OutboxEntry]:
        """The entries of ``channel`` due at ``now``, each claimed until ``until`` (its
        ``attempts`` counted): another instance claims none of them before then."""

        def claim(connection: Connection) -> list[OutboxEntry]:
            c = outbox.c
            due = (
                select(outbox)
                .where(and_(c.channel == channel, c.due_at <= now))
                .order_by(c.due_at, c.entry_id)
                .limit(limit)
            )
            claimed = []
            for row in connection.execute(due).all():
                m = row._mapping
                taken = connection.execute(
                    update(outbox)
                    .where(
                        and_(
                            c.entry_id == m["entry_id"],
                            c.attempts == m["attempts"],  # nobody claimed it meanwhile
                            c.due_at <= now,
                        )
                    )
                    .values(due_at=until, attempts=c.attempts + 1, last_error=None)
                ).rowcount
                if taken == 1:
                    claimed.append(self._entry({**m, "attempts": m["attempts"] + 1}))
            return claimed

        return await self._tx.apply(claim)

    async def claim(self, entry: OutboxEntry, *, until: datetime) -> bool:
        """Keep ``entry`` claimed until ``until``, unless another instance claimed it since it
        was read (its ``attempts`` moved on): whether it is still this instance's to try."""
        c = outbox.c
        statement = (
            update(outbox)
            .where(and_(c.entry_id == entry.entry_id, c.attempts == entry.attempts))
            .values(due_at=until)
        )
        return bool(await self._tx.apply(lambda connection: connection.execute(statement).rowcount))

    async def done(self, entry_id: str) -> bool:
        """Forget a delivered (or moot) entry; whether it was there."""
        statement = delete(outbox).where(outbox.c.entry_id == entry_id)
        return bool(await self._tx.apply(lambda connection: connection.execute(statement).rowcount))

    async def retry_at(self, entry_id: str, due_at: datetime, *, error: str | None = None) -> None:
        """Try ``entry_id`` again at ``due_at`` (``error``: why it failed, for operators)."""
        statement = (
            update(outbox)
            .where(outbox.c.entry_id == entry_id)
            .values(due_at=due_at, last_error=None if error is None else error[:255])
        )
        await self._tx.apply(lambda connection: connection.execute(statement))

    async def wake(self, channel: str, *, now: datetime) -> int:
        """Make every entry of ``channel`` waiting after a failure due at ``now`` (the service
        is back: no need to wait out their backoff); entries being tried are left alone.
        How many."""
        c = outbox.c
        statement = (
            update(outbox)
            .where(and_(c.channel == channel, c.last_error.is_not(None), c.due_at > now))
            .values(due_at=now)
        )
        return int(await self._tx.apply(lambda connection: connection.execute(statement).rowcount))

    async def count(self, channel: str, *, kind: str | None = None) -> int:
        """How many entries of ``channel`` (of ``kind``) are owed."""
        where = outbox.c.channel == channel
        if kind is not None:
            where = and_(where, outbox.c.kind == kind)
        query = select(func.count()).select_from(outbox).where(where)

        def counted(connection: Connection) -> int:
            return int(connection.execute(query).scalar() or 0)

        return await self._tx.read(counted)

    def _row(self, entry: OutboxEntry) -> dict[str, Any]:
        return {
            "entry_id": entry.entry_id,
            "channel": entry.channel,
            "kind": entry.kind,
            "tenant_id": entry.tenant_id,
            "pause_id": entry.pause_id,
            "payload": self._codec.encode(dict(entry.payload)),
            "attempts": entry.attempts,
            "due_at": entry.due_at,
            "created_at": entry.created_at,
            "last_error": entry.last_error,
        }

    def _entry(self, m: RowMapping | Mapping[str, Any]) -> OutboxEntry:
        return OutboxEntry(
            entry_id=m["entry_id"],
            channel=m["channel"],
            kind=m["kind"],
            tenant_id=m["tenant_id"],
            pause_id=m["pause_id"],
            payload=self._codec.decode(m["payload"]),
            attempts=m["attempts"],
            due_at=m["due_at"],
            created_at=m["created_at"],
            last_error=m["last_error"],
        )
