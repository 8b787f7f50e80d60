"""``MessageRefs`` on a database: the ``cs_message_refs`` table, one short statement per call.

Each call is a synchronous body run by the database's transactions (``bot.store.transactions``):
on a SQLite file in a worker thread, so no wait on the file blocks the event loop.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, RowMapping, and_, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from bot.store.database import Database
from bot.store.records import MessageRefRecord
from bot.store.statements import MARK_TOLD
from bot.store.tables import message_refs
from bot.store.transactions import Transactions


class SqlMessageRefs:
    """``MessageRefs`` on ``database`` (the App gives it to its channels as ``message_refs``)."""

    def __init__(self, database: Database) -> None:
        self._tx: Transactions = database.transactions

    async def add(self, ref: MessageRefRecord) -> bool:
        try:
            await self._tx.apply(functools.partial(_add, ref), short=True)
        except IntegrityError:
            return False
        return True

    async def get(self, pause_id: str) -> MessageRefRecord | None:
        return await self._tx.read(functools.partial(_get, pause_id), short=True)

    async def close(self, pause_id: str, at: datetime) -> bool:
        return await self._tx.apply(functools.partial(_close, pause_id, at), short=True)

    async def get_each(self, pause_ids: Sequence[str]) -> list[MessageRefRecord]:
        return await self._tx.read(functools.partial(_get_each, tuple(pause_ids)), short=True)

    async def close_each(
        self, pause_ids: Sequence[str], at: datetime, *, told: str | None = None
    ) -> list[str]:
        return await self._tx.apply(
            functools.partial(_close_each, tuple(pause_ids), at, told), short=True
        )

    async def open_in_thread(self, conversation: str, thread: str) -> list[MessageRefRecord]:
        return await self._tx.read(
            functools.partial(_open_in_thread, conversation, thread), short=True
        )

    async def in_thread(self, conversation: str, thread: str) -> list[MessageRefRecord]:
        return await self._tx.read(functools.partial(_in_thread, conversation, thread), short=True)

    async def open_refs(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[MessageRefRecord]:
        return await self._tx.read(functools.partial(_open_refs, after, limit))

    async def asked_with(self, pause_id: str, turn: str) -> list[MessageRefRecord]:
        return await self._tx.read(functools.partial(_asked_with, pause_id, turn), short=True)

    async def join(self, ref: MessageRefRecord, sharing: Sequence[str]) -> bool:
        try:
            await self._tx.apply(functools.partial(_join, ref, tuple(sharing)), short=True)
        except IntegrityError:
            return False
        return True


# ----------------------------------------------------------------- bodies (in the transaction)


def _add(ref: MessageRefRecord, connection: Connection) -> None:
    connection.execute(insert(message_refs).values(_row(ref)))


def _get(pause_id: str, connection: Connection) -> MessageRefRecord | None:
    statement = select(message_refs).where(message_refs.c.pause_id == pause_id)
    row = connection.execute(statement).first()
    return None if row is None else _record(row._mapping)


def _close(pause_id: str, at: datetime, connection: Connection) -> bool:
    closing = (
        update(message_refs)
        .where(and_(message_refs.c.pause_id == pause_id, message_refs.c.closed_at.is_(None)))
        .values(closed_at=at)
    )
    return connection.execute(closing).rowcount == 1


def _get_each(pause_ids: tuple[str, ...], connection: Connection) -> list[MessageRefRecord]:
    statement = (
        select(message_refs)
        .where(message_refs.c.pause_id.in_(pause_ids))
        .order_by(message_refs.c.pause_id)
    )
    return [_record(row._mapping) for row in connection.execute(statement).all()]


def _close_each(
    pause_ids: tuple[str, ...], at: datetime, told: str | None, connection: Connection
) -> list[str]:
    """One conditional UPDATE whose RETURNING says which it closed (SQLite 3.35+ and
    PostgreSQL): the caller knows whether its own question's message was among them. With
    ``told``, that root's end recorded told in the same transaction (``MARK_TOLD``, as
    ``SqlStore.mark_told``: the end told once, whoever records it first)."""
    closing = (
        update(message_refs)
        .where(and_(message_refs.c.pause_id.in_(pause_ids), message_refs.c.closed_at.is_(None)))
        .values(closed_at=at)
        .returning(message_refs.c.pause_id)
    )
    closed = sorted(row[0] for row in connection.execute(closing).all())
    if told is not None:
        connection.execute(MARK_TOLD, {"b_execution_id": told, "b_at": at})
    return closed


def _open_in_thread(
    conversation: str, thread: str, connection: Connection
) -> list[MessageRefRecord]:
    statement = (
        select(message_refs)
        .where(
            and_(
                message_refs.c.conversation == conversation,
                message_refs.c.thread == thread,
                message_refs.c.closed_at.is_(None),
            )
        )
        .order_by(message_refs.c.created_at, message_refs.c.pause_id)
    )
    return [_record(row._mapping) for row in connection.execute(statement).all()]


def _in_thread(conversation: str, thread: str, connection: Connection) -> list[MessageRefRecord]:
    statement = (
        select(message_refs)
        .where(and_(message_refs.c.conversation == conversation, message_refs.c.thread == thread))
        .order_by(message_refs.c.created_at, message_refs.c.pause_id)
    )
    return [_record(row._mapping) for row in connection.execute(statement).all()]


def _open_refs(after: str | None, limit: int, connection: Connection) -> list[MessageRefRecord]:
    statement = select(message_refs).where(message_refs.c.closed_at.is_(None))
    if after is not None:
        statement = statement.where(message_refs.c.pause_id > after)
    statement = statement.order_by(message_refs.c.pause_id).limit(limit)
    return [_record(row._mapping) for row in connection.execute(statement).all()]


def _asked_with(pause_id: str, turn: str, connection: Connection) -> list[MessageRefRecord]:
    statement = (
        select(message_refs)
        .where(or_(message_refs.c.pause_id == pause_id, message_refs.c.turn == turn))
        .order_by(message_refs.c.created_at, message_refs.c.pause_id)
    )
    return [_record(row._mapping) for row in connection.execute(statement).all()]


def _join(ref: MessageRefRecord, sharing: tuple[str, ...], connection: Connection) -> None:
    connection.execute(insert(message_refs).values({**_row(ref), "shared": True}))
    if sharing:
        connection.execute(
            update(message_refs)
            .where(
                and_(
                    message_refs.c.pause_id.in_(sharing),
                    or_(message_refs.c.shared.is_(None), message_refs.c.shared.is_(False)),
                )
            )
            .values(shared=True)
        )


def _row(ref: MessageRefRecord) -> dict[str, Any]:
    return {
        "pause_id": ref.pause_id,
        "tenant_id": ref.tenant_id,
        "channel": ref.channel,
        "conversation": ref.conversation,
        "thread": ref.thread,
        "role": ref.role,
        "reference": dict(ref.reference),
        "created_at": ref.created_at,
        "closed_at": ref.closed_at,
        "turn": ref.turn,
        "shared": ref.shared,
    }


def _record(m: RowMapping) -> MessageRefRecord:
    return MessageRefRecord(
        pause_id=m["pause_id"],
        tenant_id=m["tenant_id"],
        channel=m["channel"],
        conversation=m["conversation"],
        thread=m["thread"],
        role=m["role"],
        reference=m["reference"],
        created_at=m["created_at"],
        closed_at=m["closed_at"],
        turn=m["turn"],
        shared=bool(m["shared"]),
    )
