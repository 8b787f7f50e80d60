"""Where the bot keeps its Slack state: approval message references and the events it has seen.

The message references are kept by the App's store, channel-neutral (``App.message_refs``):
pause id → the message that asks it. Written before ``send`` returns, so a retried send finds it
and never posts twice; looked up by (channel, thread) for thread replies; closed once the
message shows an outcome. ``SlackMessageStore`` gives them to the bot as ``MessageRef``.

``cs_seen_events`` (``channels.slack.schema``): the Events API ids already handled; a retry of
one is dropped. Each call is one synchronous body run by the database's transactions
(``channels.slack.database``): on a SQLite file in a worker thread, so no wait on the file ever
blocks the event loop.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

from sqlalchemy import Connection, and_, delete, insert, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from bot.core.errors import StorageError
from bot.store.interruptions import is_interruption
from bot.store.records import MessageRefRecord
from bot.store.repositories import MessageRefs
from channels.slack.database import SlackDatabase
from channels.slack.schema import seen_events


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
    escalated_copy: bool = False
    """The copy of the question asked where it escalated to (``escalate_to``'s conversation)."""
    turn: str | None = None
    """The key of the model turn whose questions may share the message
    (``channels.slack.turn_messages.turn_key``), None for a question asked on its own."""
    shared: bool = False
    """The message asks other questions too (a turn's): updating it reads them."""
    noted: bool | None = None
    """Whether the requester was owed a note saying where the question waits (decided as it
    was asked: ``SlackGateway._post_note``), so showing its outcome reads nothing to know
    whether a note must be updated; None for a reference stored before it was kept (looked
    up then: ``cs_slack_notes``, else the note's entry still owed)."""

    def __repr__(self) -> str:  # never print the pause id
        return f"MessageRef(channel_id={self.channel_id!r}, ts={self.ts!r}, closed={self.closed})"

    @property
    def thread(self) -> str:
        """The thread the message is in: the one it was posted in, else the one it starts."""
        return self.thread_ts or self.ts


class SeenEventsBusyError(StorageError):
    """The event could not be recorded as seen (the database was busy or unreachable).

    Nothing was recorded, so the event was not handled either: answer Slack with a status it
    retries (503), and the retry is handled as the first delivery.
    """

    code = "slack.events-busy"


class SlackMessageStore:
    """The Slack messages among the store's message references (``MessageRef`` ⇄ the
    channel-neutral ``MessageRefRecord``: the conversation is the Slack channel, the thread the
    one the message is in; ``ts`` and ``thread_ts`` are Slack's own reference)."""

    def __init__(self, refs: MessageRefs) -> None:
        self._refs = refs

    async def get(self, pause_id: str) -> MessageRef | None:
        record = await self._refs.get(pause_id)
        return None if record is None else _slack_ref(record)

    async def add(self, ref: MessageRef, at: datetime) -> bool:
        """Store ``ref``; ``False`` when the pause already has one (it is kept as it was)."""
        return await self._refs.add(_record(ref, at))

    async def copies(self, pause_id: str) -> list[MessageRef]:
        """Every message that asks the pause: the question, and its escalated copy if any."""
        found = await self._refs.get_each((pause_id, _copy_key(pause_id)))  # one read
        return [_slack_ref(record) for record in found]  # the question first (its key sorts first)

    async def close(self, pause_id: str, at: datetime, *, told: str | None = None) -> bool:
        """Mark the message (and its escalated copy) as showing its outcome; ``False`` if the
        question's message already was (or is unknown). ``told``: a run whose end the same
        write records told (``ExecutionResumeEvent.end_told``)."""
        keys = (pause_id, _copy_key(pause_id))
        return pause_id in await self._refs.close_each(keys, at, told=told)

    async def open_questions(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[MessageRef]:
        """A page of the open approval messages by pause id (escalated copies left out: each
        is brought up to date with its question)."""
        records = await self._refs.open_refs(after=after, limit=limit)
        return [_slack_ref(r) for r in records if not r.pause_id.endswith(ESCALATED_COPY)]

    async def open_in_thread(self, channel_id: str, thread_ts: str) -> list[MessageRef]:
        """The open approval messages a reply in thread ``thread_ts`` may be about.

        A message is in that thread when it starts it (its ``ts``) or was posted in it
        (a THREAD_OWNER question posted in the owner's thread).
        """
        return [_slack_ref(r) for r in await self._refs.open_in_thread(channel_id, thread_ts)]

    async def asked_with(
        self, pause_id: str, turn: str
    ) -> tuple[MessageRef | None, list[MessageRef]]:
        """In one read: the message that asks ``pause_id`` if any, and the references of turn
        ``turn``'s questions, oldest first (escalated copies left out)."""
        found = [_slack_ref(r) for r in await self._refs.asked_with(pause_id, turn)]
        own = next((r for r in found if r.pause_id == pause_id and not r.escalated_copy), None)
        return own, [r for r in found if r.turn == turn and not r.escalated_copy]

    async def join(self, ref: MessageRef, sharing: Sequence[str], at: datetime) -> bool:
        """Store ``ref``, a question asked in the message of questions ``sharing``, and mark
        them all shared (one transaction); ``False`` when the pause already has one."""
        return await self._refs.join(_record(replace(ref, shared=True), at), sharing)

    async def in_message(self, message: MessageRef) -> list[MessageRef]:
        """Every question ``message`` asks (open or closed), oldest first: one, or the
        questions of one model turn asked together (``channels.slack.turn_messages``)."""
        found = await self._refs.in_thread(message.channel_id, message.thread)
        return [
            ref for ref in map(_slack_ref, found) if ref.ts == message.ts and not ref.escalated_copy
        ]


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
            await self._db.apply(functools.partial(_see, event_id, at), short=True)
        except IntegrityError:
            return False
        except Exception as error:
            if not _unavailable(error):
                raise
            raise SeenEventsBusyError(
                f"event {event_id} could not be recorded ({_cause(error)}); "
                "answer Slack with a retryable status"
            ) from error
        return True

    async def take_over(self, event_id: str, at: datetime, stale_before: datetime) -> bool:
        """``True`` when a delivery of ``event_id`` was claimed before ``stale_before`` and never
        handled (its process died before its ack): this retry claims it and handles it."""
        try:
            return await self._db.apply(
                functools.partial(_take_over, event_id, at, stale_before), short=True
            )
        except Exception as error:
            if not _unavailable(error):
                raise
            raise SeenEventsBusyError(
                f"event {event_id} could not be taken over ({_cause(error)}); "
                "answer Slack with a retryable status"
            ) from error

    async def was_handled(self, event_id: str) -> bool:
        """Whether a delivery of ``event_id`` was handled (acknowledged)."""
        try:
            return await self._db.apply(functools.partial(_was_handled, event_id), short=True)
        except Exception as error:
            if not _unavailable(error):
                raise
            raise SeenEventsBusyError(
                f"event {event_id} could not be looked up ({_cause(error)}); "
                "answer Slack with a retryable status"
            ) from error

    async def handled(self, event_id: str, at: datetime) -> None:
        """Mark ``event_id`` handled (acknowledged): a later retry of it is only dropped."""
        # already marked, or the database busy or away (a connection refused while it
        # restarts: never a 500 for an event handled): a retry then waits out the claim (rare)
        try:
            await self._db.apply(functools.partial(_see, _handled(event_id), at), short=True)
        except Exception as error:
            if not _unavailable(error):
                raise

    async def prune(self, before: datetime) -> int:
        return await self._housekeeping.apply(functools.partial(_prune, before))


def _unavailable(error: BaseException) -> bool:
    """The statement did not happen for the database's sake: busy, or away for now (a
    refused connection is raised by the driver as is, not as a ``DBAPIError``)."""
    return isinstance(error, DBAPIError) or is_interruption(error)


def _cause(error: BaseException) -> str:
    orig = getattr(error, "orig", None)
    return type(orig if orig is not None else error).__name__


# ----------------------------------------------------------------- bodies (in the transaction)


def _see(event_id: str, at: datetime, connection: Connection) -> None:
    connection.execute(insert(seen_events).values(event_id=event_id, seen_at=at))


def _handled(event_id: str) -> str:
    return f"{event_id}#handled"


def _was_handled(event_id: str, connection: Connection) -> bool:
    found = connection.execute(
        select(seen_events.c.event_id).where(seen_events.c.event_id == _handled(event_id))
    ).first()
    return found is not None


def _take_over(event_id: str, at: datetime, stale_before: datetime, connection: Connection) -> bool:
    done = connection.execute(
        select(seen_events.c.event_id).where(seen_events.c.event_id == _handled(event_id))
    ).first()
    if done is not None:
        return False
    claimed = connection.execute(
        update(seen_events)
        .where(and_(seen_events.c.event_id == event_id, seen_events.c.seen_at < stale_before))
        .values(seen_at=at)
    )
    return claimed.rowcount == 1


def _prune(before: datetime, connection: Connection) -> int:
    result = connection.execute(delete(seen_events).where(seen_events.c.seen_at < before))
    return int(result.rowcount or 0)


ESCALATED_COPY: Final = ":escalated"
"""The escalated copy of a question is a second row of ``cs_message_refs`` (whose key is the
pause id: one row per key) under the key ``<pause id>:escalated``. Pause ids are hex, so the key
is nobody else's; a reference read back gives the pause id without it (``escalated_copy``)."""


def _copy_key(pause_id: str) -> str:
    return f"{pause_id}{ESCALATED_COPY}"


def _record(ref: MessageRef, at: datetime) -> MessageRefRecord:
    return MessageRefRecord(
        pause_id=_copy_key(ref.pause_id) if ref.escalated_copy else ref.pause_id,
        tenant_id=ref.tenant_id,
        channel=ref.implementation,
        conversation=ref.channel_id,
        thread=ref.thread,
        role=ref.role,
        reference={"ts": ref.ts, "thread_ts": ref.thread_ts}
        | ({} if ref.noted is None else {"noted": ref.noted}),
        created_at=at,
        closed_at=at if ref.closed else None,
        turn=None if ref.escalated_copy else ref.turn,
        shared=ref.shared and not ref.escalated_copy,
    )


def _slack_ref(record: MessageRefRecord) -> MessageRef:
    ts, thread_ts = record.reference.get("ts"), record.reference.get("thread_ts")
    if not isinstance(ts, str) or not isinstance(thread_ts, str | None):
        raise StorageError(
            f"the message reference of {record.channel!r} is no Slack message's "
            "(its ts and thread_ts are not text)"
        )
    copy = record.pause_id.endswith(ESCALATED_COPY)
    noted = record.reference.get("noted")
    return MessageRef(
        pause_id=record.pause_id.removesuffix(ESCALATED_COPY),
        tenant_id=record.tenant_id,
        channel_id=record.conversation,
        ts=ts,
        thread_ts=thread_ts,
        role=record.role,
        implementation=record.channel,
        closed=record.closed,
        escalated_copy=copy,
        turn=record.turn,
        shared=record.shared,
        noted=noted if isinstance(noted, bool) else None,
    )
