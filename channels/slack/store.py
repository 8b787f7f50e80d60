"""Where the bot keeps its Slack state: approval message references and the events it has seen.

``cs_slack_messages``: pause id → the message that asks it (channel, ts, thread). Written
before ``send`` returns, so a retried send finds it and never posts twice; looked up by
(channel, thread) for thread replies; closed once the message shows an outcome.
``cs_slack_events``: the Events API ids already handled; a retry of one is dropped.

Each call is one synchronous body run by the database's transactions (``channels.slack.database``):
on a SQLite file in a worker thread, so no wait on the file ever blocks the event loop.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, delete, insert, or_, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from bot.core.errors import StorageError
from bot.store.tables import slack_events, slack_messages
from channels.slack.database import SlackDatabase


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


class SeenEventsBusyError(StorageError):
    """The event could not be recorded as seen (the database was busy or unreachable).

    Nothing was recorded, so the event was not handled either: answer Slack with a status it
    retries (503), and the retry is handled as the first delivery.
    """

    code = "slack.events-busy"


class SlackMessageStore:
    """The message references (one short transaction per call)."""

    def __init__(self, db: SlackDatabase) -> None:
        self._db = db.state

    async def get(self, pause_id: str) -> MessageRef | None:
        return await self._db.read(functools.partial(_get, pause_id))

    async def add(self, ref: MessageRef, at: datetime) -> bool:
        """Store ``ref``; ``False`` when the pause already has one (it is kept as it was)."""
        try:
            await self._db.apply(functools.partial(_add, ref, at))
        except IntegrityError:
            return False
        return True

    async def close(self, pause_id: str, at: datetime) -> bool:
        """Mark the message as showing its outcome; ``False`` if it already was (or is unknown)."""
        return await self._db.apply(functools.partial(_close, pause_id, at))

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
        return await self._db.read(functools.partial(_many, where))

    async def open_of_tenant(self, tenant_id: str) -> list[MessageRef]:
        where = and_(slack_messages.c.tenant_id == tenant_id, ~slack_messages.c.closed)
        return await self._db.read(functools.partial(_many, where))


class SeenEvents:
    """Events API ids already handled (an insert that a retry's duplicate key refuses)."""

    def __init__(self, db: SlackDatabase) -> None:
        self._db = db.dedup
        self._housekeeping = db.state  # pruning may wait for the lock: it answers no one

    async def first_time(self, event_id: str, at: datetime) -> bool:
        """``True`` the first time ``event_id`` is seen, ``False`` for a retry of it.

        Raises :class:`SeenEventsBusyError` when the insert did not happen (on a SQLite file:
        another writer held the lock past ``DEDUP_BUSY_TIMEOUT``); it was rolled back.
        """
        try:
            await self._db.apply(functools.partial(_see, event_id, at))
        except IntegrityError:
            return False
        except DBAPIError as error:
            raise SeenEventsBusyError(
                f"event {event_id} could not be recorded ({type(error.orig).__name__}); "
                "answer Slack with a retryable status"
            ) from error
        return True

    async def take_over(self, event_id: str, at: datetime, stale_before: datetime) -> bool:
        """``True`` when a delivery of ``event_id`` was claimed before ``stale_before`` and never
        handled (its process died before its ack): this retry claims it and handles it."""
        try:
            return await self._db.apply(functools.partial(_take_over, event_id, at, stale_before))
        except DBAPIError as error:
            raise SeenEventsBusyError(
                f"event {event_id} could not be taken over ({type(error.orig).__name__}); "
                "answer Slack with a retryable status"
            ) from error

    async def handled(self, event_id: str, at: datetime) -> None:
        """Mark ``event_id`` handled (acknowledged): a later retry of it is only dropped."""
        # already marked, or the database is busy: a retry then waits out the claim (rare)
        with contextlib.suppress(DBAPIError):
            await self._db.apply(functools.partial(_see, _handled(event_id), at))

    async def prune(self, before: datetime) -> int:
        return await self._housekeeping.apply(functools.partial(_prune, before))


# ----------------------------------------------------------------- bodies (in the transaction)


def _get(pause_id: str, connection: Connection) -> MessageRef | None:
    row = connection.execute(
        select(slack_messages).where(slack_messages.c.pause_id == pause_id)
    ).first()
    return None if row is None else _ref(row._mapping)


def _add(ref: MessageRef, at: datetime, connection: Connection) -> None:
    connection.execute(
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


def _close(pause_id: str, at: datetime, connection: Connection) -> bool:
    result = connection.execute(
        update(slack_messages)
        .where(and_(slack_messages.c.pause_id == pause_id, ~slack_messages.c.closed))
        .values(closed=True, updated_at=at)
    )
    return result.rowcount == 1


def _many(where: ColumnElement[bool], connection: Connection) -> list[MessageRef]:
    statement = select(slack_messages).where(where).order_by(slack_messages.c.created_at)
    return [_ref(row._mapping) for row in connection.execute(statement).all()]


def _see(event_id: str, at: datetime, connection: Connection) -> None:
    connection.execute(insert(slack_events).values(event_id=event_id, seen_at=at))


def _handled(event_id: str) -> str:
    return f"{event_id}#handled"


def _take_over(event_id: str, at: datetime, stale_before: datetime, connection: Connection) -> bool:
    done = connection.execute(
        select(slack_events.c.event_id).where(slack_events.c.event_id == _handled(event_id))
    ).first()
    if done is not None:
        return False
    claimed = connection.execute(
        update(slack_events)
        .where(and_(slack_events.c.event_id == event_id, slack_events.c.seen_at < stale_before))
        .values(seen_at=at)
    )
    return claimed.rowcount == 1


def _prune(before: datetime, connection: Connection) -> int:
    result = connection.execute(delete(slack_events).where(slack_events.c.seen_at < before))
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
