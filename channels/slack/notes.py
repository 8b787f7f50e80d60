"""Where the requester's note is: the message in their own thread saying where their request waits.

A request asked in a conversation (a CHANNEL role) is out of the requester's sight: the note,
posted in the thread where they started the work, tells them it waits and where, and is updated
with the outcome when the approval message is. One note per pause, kept in ``cs_slack_notes``
(``channels.slack.schema``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from channels.slack.database import SlackDatabase
from channels.slack.schema import requester_notes


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteRef:
    """A note in a requester's thread: where it is (the pause it is about is its key)."""

    channel_id: str
    ts: str
    thread_ts: str


class RequesterNotes:
    """The notes' references (one short transaction per call, on the Slack state's
    transactions: on a SQLite file in a worker thread)."""

    def __init__(self, db: SlackDatabase) -> None:
        self._tx = db.state

    async def add(self, pause_id: str, note: NoteRef, at: datetime) -> bool:
        """Store ``note``; ``False`` when the pause already has one (kept as it was)."""
        values = {
            "pause_id": pause_id,
            "channel_id": note.channel_id,
            "ts": note.ts,
            "thread_ts": note.thread_ts,
            "created_at": at,
        }
        try:
            await self._tx.write(
                lambda connection: connection.execute(insert(requester_notes).values(**values))
            )
        except IntegrityError:
            return False
        return True

    async def get(self, pause_id: str) -> NoteRef | None:
        statement = select(requester_notes).where(requester_notes.c.pause_id == pause_id)
        row = await self._tx.read(lambda connection: connection.execute(statement).first())
        if row is None:
            return None
        m = row._mapping
        return NoteRef(channel_id=m["channel_id"], ts=m["ts"], thread_ts=m["thread_ts"])
