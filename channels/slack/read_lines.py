"""How a thread reply was read ("Read X as approve."), owed before the answer is recorded.

The line is told once the answer is recorded; recorded first and owed after, a process that
died between the two would lose it (issue 24). So it is owed (``SlackOutbox.hold``) before the
reply is read, and its delivery decides from the pause what is owed: once the pause was closed
by this reply (its recorded reply and responder are this one's), the line; while the pause
waits, later; closed otherwise (the reply refused, not understood, counted among several, the
question answered elsewhere or gone), nothing. The instance that recorded the answer says it at
once; one that died leaves it to the worker of any instance once its claim lapses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from bot.app import App
from bot.core.enums import PauseStatus
from bot.core.errors import ChannelUnavailableError
from bot.core.results import PauseView
from bot.store.outbox import OutboxEntry
from channels.kit.outcomes import outcome_of, verdict
from channels.slack.gateway import MAX_THREAD_TEXT, quote
from channels.slack.outbox import NotYet, SlackOutbox, key_of, said_mark
from channels.slack.redaction import log, redact

READ_LINE: Final = "read_line"


def read_line(pause: PauseView | None, *, reply: str, by: str) -> str | None:
    """What to say in the thread of ``reply`` by ``by``: how it was read once it closed
    ``pause``; ``None`` when something else closed it (or it waits)."""
    if pause is None or pause.reply != reply or pause.responder != by:
        return None
    outcome = outcome_of(pause, read_as=reply)
    if outcome is None:
        return None
    return redact(f'Read "{quote(reply)}" as {verdict(outcome)}.')[:MAX_THREAD_TEXT]


@dataclass(frozen=True, slots=True)
class HeldLine:
    """A reply's line, owed before the reply is read."""

    key: str
    entry: OutboxEntry | None
    """As owed by this delivery of the reply; ``None`` when it was not (owed already by an
    earlier delivery of the same message, or the database away)."""
    payload: Mapping[str, Any]


class ReadLines:
    """The reading lines of thread replies, on the Slack outbox."""

    def __init__(self, *, app: App, outbox: SlackOutbox) -> None:
        self._app = app
        self._outbox = outbox
        outbox.deliver_kind(READ_LINE, self._deliver)

    async def hold(
        self,
        pause_id: str,
        *,
        tenant_id: str,
        by: str,
        reply: str,
        channel: str,
        thread_ts: str,
        reply_ts: str | None,
    ) -> HeldLine:
        """Owe the line of ``reply`` (the message ``reply_ts``) before it is read: ``say`` or
        ``drop`` it once it was."""
        key = key_of("read", pause_id, channel, reply_ts or f"{by}:{thread_ts}:{reply}")
        payload = {
            "channel": channel,
            "thread_ts": thread_ts,
            "reply": reply,
            "by": by,
            "mark": said_mark(key),
        }
        entry = await self._outbox.hold(
            key, READ_LINE, payload, tenant_id=tenant_id, pause_id=pause_id
        )
        return HeldLine(key=key, entry=entry, payload=payload)

    async def say(self, held: HeldLine, pause: PauseView) -> None:
        """The reply closed ``pause`` (its answer is recorded): say the line now, unless
        another instance does."""
        if held.entry is not None:
            await self._outbox.say_held(held.entry)
            return
        p = held.payload
        line = read_line(pause, reply=str(p["reply"]), by=str(p["by"]))
        if line is None:
            return
        try:  # owed already (under the same key: left to its holder), or the database away
            await self._outbox.post(
                key=held.key,
                channel=str(p["channel"]),
                thread_ts=str(p["thread_ts"]),
                text=line,
                mark=dict(p["mark"]),
                tenant_id=pause.tenant_id,
                pause_id=pause.pause_id,
            )
        except ChannelUnavailableError as error:  # neither Slack nor the database: said never
            log.warning("slack: a reply's reading was not said: %s", error)

    async def drop(self, held: HeldLine) -> None:
        """The reply did not close the question: no line (when this delivery owes it)."""
        if held.entry is not None:
            await self._outbox.drop(held.entry)

    async def _deliver(self, entry: OutboxEntry) -> None:
        assert entry.pause_id is not None
        pause = await self._app.find_pause(entry.pause_id, tenant_id=entry.tenant_id)
        if pause is not None and pause.status is PauseStatus.PENDING:
            raise NotYet  # the reply may still be read (a process died reading it)
        p = entry.payload
        line = read_line(pause, reply=str(p["reply"]), by=str(p["by"]))
        if line is None:
            return  # moot: nothing to say
        post = {
            "channel": p["channel"],
            "thread_ts": p["thread_ts"],
            "text": line,
            "blocks": None,
            "mark": p["mark"],
            "note": False,
            "moot_when_closed": False,
        }
        await self._outbox.post_as(entry, post)
