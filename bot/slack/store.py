"""Where the bot keeps its Slack state: approval message references and the events it has seen.

``cs_slack_messages``: pause id → the message that asks it (channel, ts, thread). Written
before ``send`` returns, so a retried send finds it and never posts twice; looked up by
(channel, thread) for thread replies; closed once the message shows an outcome.
``cs_slack_events``: the Events API ids already handled; a retry of one is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from bot.slack.database import SlackDatabase
from bot.store.tables import slack_events, slack_messages


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageRef:
    """An approval message: where it is and which pause it asks."""

    pause_id: str
    tenant_id: str
    channel_id: str
    ts: str
    thread_ts: str | None
    role: str
    implementation: str
    closed: bool = False

    def __repr__(self) -> str:  # never print the pause id
        return f"MessageRef(channel_id={self.channel_id!r}, ts={self.ts!r}, closed={self.closed})"


class SlackMessageStore:
    """The message references (one short transaction per call)."""

    def __init__(self, db: SlackDatabase) -> None:
        self._db = db

    async def get(self, pause_id: str) -> MessageRef | None:
        async with self._db.connect() as connection:
            row = (
                await connection.execute(
                    select(slack_messages).where(slack_messages.c.pause_id == pause_id)
                )
            ).first()
        return None if row is None else _ref(row._mapping)

    async def add(self, ref: MessageRef, at: datetime) -> bool:
        """Store ``ref``; ``False`` when the pause already has one (it is kept as it was)."""
        try:
            async with self._db.begin() as connection:
                await connection.execute(
                    insert(slack_messages).values(
                        pause_id=ref.pause_id,
                        tenant_id=ref.tenant_id,
                        channel_id=ref.channel_id,
                        ts=ref.ts,
                        thread_ts=ref.thread_ts,
                        role=ref.role,
                        implementation=ref.implementation,
                        closed=ref.closed,
                        created_at=at,
                        updated_at=at,
                    )
                )
        except IntegrityError:
            return False
        return True

    async def close(self, pause_id: str, at: datetime) -> bool:
        """Mark the message as showing its outcome; ``False`` if it already was (or is unknown)."""
        async with self._db.begin() as connection:
            result = await connection.execute(
                update(slack_messages)
                .where(and_(slack_messages.c.pause_id == pause_id, ~slack_messages.c.closed))
                .values(closed=True, updated_at=at)
            )
        return result.rowcount == 1

    async def open_in_thread(self, channel_id: str, thread_ts: str) -> list[MessageRef]:
        """The open approval messages a reply in thread ``thread_ts`` may be about.

        A message is in that thread when it starts it (its ``ts``) or was posted in it
        (a THREAD_OWNER question posted in the owner's thread).
        """
        where = and_(
            slack_messages.c.channel_id == channel_id,
            or_(slack_messages.c.ts == thread_ts, slack_messages.c.thread_ts == thread_ts),
            ~slack_messages.c.closed,
        )
        return await self._many(where)

    async def open_of_tenant(self, tenant_id: str) -> list[MessageRef]:
        where = and_(slack_messages.c.tenant_id == tenant_id, ~slack_messages.c.closed)
        return await self._many(where)

    async def _many(self, where: Any) -> list[MessageRef]:
        statement = select(slack_messages).where(where).order_by(slack_messages.c.created_at)
        async with self._db.connect() as connection:
            rows = (await connection.execute(statement)).all()
        return [_ref(row._mapping) for row in rows]


class SeenEvents:
    """Events API ids already handled (insert-or-ignore); old ones are pruned."""

    def __init__(self, db: SlackDatabase) -> None:
        self._db = db

    async def first_time(self, event_id: str, at: datetime) -> bool:
        """``True`` the first time ``event_id`` is seen, ``False`` for a retry of it."""
        try:
            async with self._db.begin() as connection:
                await connection.execute(insert(slack_events).values(event_id=event_id, seen_at=at))
        except IntegrityError:
            return False
        return True

    async def prune(self, before: datetime) -> int:
        async with self._db.begin() as connection:
            result = await connection.execute(
                delete(slack_events).where(slack_events.c.seen_at < before)
            )
        return int(result.rowcount or 0)


def _ref(m: Any) -> MessageRef:
    return MessageRef(
        pause_id=m["pause_id"],
        tenant_id=m["tenant_id"],
        channel_id=m["channel_id"],
        ts=m["ts"],
        thread_ts=m["thread_ts"],
        role=m["role"],
        implementation=m["implementation"],
        closed=bool(m["closed"]),
    )
