"""What the bot owes Slack, delivered until done: the App's outbox (``cs_outbox``) for Slack.

Every message the bot says beside its questions (a requester's note, a line in a thread — "Read
X as …", a hint, a run's end —, a note's update, a closed question's update) is recorded as
owed before it is tried, and forgotten once Slack took it. What Slack failed in a way that
may mend (5xx, 429, refused, timed out) stays owed and is tried again by ``deliver_due`` (the
bot's timer, every few seconds) after a backoff, or after Slack's ``Retry-After``; what Slack
refuses for good (a bad channel, not in it) is logged and dropped.

At least once, said once: every post carries a mark (Slack message metadata: a digest of its
key, never a pause id) and an entry tried before (its ``attempts``: an instance that died, a
post whose answer never came) is first looked for where it would be; found, it is not posted
again. An update is the same whether made once or twice.

A thing that cannot be recorded (the database away) is tried all the same: the database's
outage costs its retry, never the saying of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Final

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import App
from bot.core.enums import PauseStatus
from bot.core.errors import ChannelUnavailableError
from bot.store.outbox import OutboxEntry, SqlOutbox
from channels.slack.notes import NoteRef, RequesterNotes
from channels.slack.nudge_marks import find_marked
from channels.slack.redaction import log
from channels.slack.tenant_tokens import current_tenant, speaking_for
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of, is_transient

CHANNEL: Final = "slack"
SAID_EVENT: Final = "countersign_said"
"""The metadata ``event_type`` of a message the outbox posted (unless it carries its own)."""
CLAIM: Final = timedelta(seconds=90)
"""How long an entry being tried is another instance's to leave alone (a call and its retries
take less); an instance that dies holding it leaves it to be tried again after this."""
FIRST_BACKOFF: Final = timedelta(seconds=1)
MAX_BACKOFF: Final = timedelta(seconds=10)
"""Owed things are tried again after 1, 2, 4, 8, then every 10 s: once Slack is back,
everything owed is said within seconds (issue 24: within 30 s)."""
MAX_RETRY_AFTER: Final = timedelta(seconds=120)
BATCH: Final = 50

POST: Final = "post"
NOTE_UPDATE: Final = "note_update"

Deliver = Callable[[OutboxEntry], Awaitable[None]]


class NotYet(Exception):
    """What an entry needs is not there yet (a note's update before the note): later."""


def key_of(*parts: str) -> str:
    """An entry's id from what it is about (a digest: a pause id is never a key in clear)."""
    digest = hashlib.sha256(":".join(parts).encode()).hexdigest()[:40]
    return f"{CHANNEL}:{parts[0]}:{digest}"


def said_mark(entry_id: str) -> dict[str, Any]:
    """The metadata of a message posted for the entry ``entry_id``."""
    digest = hashlib.sha256(f"countersign-said:{entry_id}".encode()).hexdigest()[:32]
    return {"event_type": SAID_EVENT, "event_payload": {"said": digest}}


def note_key(pause_id: str) -> str:
    return key_of("note", pause_id)


class SlackOutbox:
    """Records what is owed to Slack, tries it at once, and delivers what is left."""

    def __init__(
        self, *, app: App, client: AsyncWebClient, store: SqlOutbox, notes: RequesterNotes
    ) -> None:
        self._app = app
        self._client = client
        self.store = store
        self._notes = notes
        self._kinds: dict[str, Deliver] = {POST: self._post, NOTE_UPDATE: self._update_note}
        self._failing = False
        """Slack failed a delivery: the first one it takes after that wakes what waits."""

    def deliver_kind(self, kind: str, deliver: Deliver) -> None:
        """How entries of ``kind`` are delivered (the gateway's message updates...): ``deliver``
        raises what Slack failed with (transient: tried again), ``NotYet`` to wait."""
        self._kinds[kind] = deliver

    # ---------------------------------------------------------------- owing

    async def post(
        self,
        *,
        key: str,
        channel: str,
        thread_ts: str | None,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
        mark: dict[str, Any] | None = None,
        tenant_id: str | None = None,
        pause_id: str | None = None,
        note: bool = False,
        moot_when_closed: bool = False,
        look_first: bool = False,
    ) -> bool:
        """Post ``text`` (owed until Slack took it); whether it was said now.

        ``note``: it is the requester's note of ``pause_id`` (kept once posted, for its update).
        ``moot_when_closed``: not said once ``pause_id``'s question closed (a hint how to answer).
        ``look_first``: it may be there already (a run's end told again): looked for first.
        Raises ``ChannelUnavailableError`` only when Slack failed *and* the database could not
        keep it owed: the caller must keep it itself."""
        payload: dict[str, Any] = {
            "channel": channel,
            "thread_ts": thread_ts,
            "text": text,
            "blocks": blocks,
            "mark": mark or said_mark(key),
            "note": note,
            "moot_when_closed": moot_when_closed,
        }
        return await self.owe(
            key, POST, payload, tenant_id=tenant_id, pause_id=pause_id, look_first=look_first
        )

    async def update_note(
        self,
        pause_id: str,
        *,
        text: str,
        blocks: list[dict[str, Any]],
        tenant_id: str,
        try_now: bool = True,
    ) -> bool:
        """Update the requester's note of ``pause_id`` (when it has one, once it is posted);
        not ``try_now``: left to the worker (Slack just failed it)."""
        payload = {"text": text, "blocks": blocks}
        key = key_of("note_update", pause_id)
        return await self.owe(
            key, NOTE_UPDATE, payload, tenant_id=tenant_id, pause_id=pause_id, try_now=try_now
        )

    async def settle_note(
        self, pause_id: str, *, text: str, blocks: list[dict[str, Any]], tenant_id: str
    ) -> None:
        """Update the requester's note of ``pause_id`` now, owing nothing when Slack takes it
        (no entry written and deleted); owed only while the note itself is, or when Slack fails
        the update for now. Refused for good (the note deleted...): not said, as the worker."""
        try:
            await self._say_note_update(pause_id, text, blocks)
        except NotYet:
            await self.update_note(pause_id, text=text, blocks=blocks, tenant_id=tenant_id)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            if not is_transient(error):
                log.warning("slack: a note's update was not said: %s", failure_of(error))
                return
            await self.update_note(
                pause_id, text=text, blocks=blocks, tenant_id=tenant_id, try_now=False
            )

    async def owe(
        self,
        key: str,
        kind: str,
        payload: Mapping[str, Any],
        *,
        tenant_id: str | None = None,
        pause_id: str | None = None,
        look_first: bool = False,
        try_now: bool = True,
        due_in: timedelta = timedelta(0),
    ) -> bool:
        """Record ``kind`` as owed under ``key`` and (``try_now``) try it; whether it was said.
        Not tried now, it is due for the worker in ``due_in``. An entry already owed under
        ``key`` is left to its worker."""
        now = self._app.clock.now()
        entry = OutboxEntry(
            entry_id=key,
            channel=CHANNEL,
            kind=kind,
            tenant_id=tenant_id or current_tenant() or "",
            pause_id=pause_id,
            payload=dict(payload),
            # claimed by this try (a second attempt looks first); due later if it dies here
            due_at=now + CLAIM if try_now else now + due_in,
            created_at=now,
            attempts=2 if look_first else 1,
        )
        try:
            recorded = await self.store.owe(entry)
        except Exception as error:  # the database away: say it all the same, once
            log.warning("slack: could not record what is owed: %s", type(error).__name__)
            return await self._try_unrecorded(entry) if try_now else False
        if not recorded or not try_now:
            return False
        try:
            return await self.deliver(entry)
        except Exception as error:  # the database went away meanwhile: the worker goes on
            log.warning("slack: what is owed waits: %s", type(error).__name__)
            return False

    async def hold(
        self, key: str, kind: str, payload: Mapping[str, Any], *, tenant_id: str, pause_id: str
    ) -> OutboxEntry | None:
        """Record ``kind`` as owed before its moment comes (a reply's reading, owed before the
        answer is recorded), claimed by this instance: ``say_held`` or ``drop`` it once the
        moment came; should this instance die first, the worker takes it once the claim lapses
        (its kind decides then whether it is still owed). ``None``: not recorded (owed under
        ``key`` already, or the database away)."""
        now = self._app.clock.now()
        entry = OutboxEntry(
            entry_id=key,
            channel=CHANNEL,
            kind=kind,
            tenant_id=tenant_id,
            pause_id=pause_id,
            payload=dict(payload),
            due_at=now + CLAIM,
            created_at=now,
            attempts=1,
        )
        try:
            return entry if await self.store.owe(entry) else None
        except Exception as error:  # the database away: its moment will say
            log.warning("slack: could not record what is owed: %s", type(error).__name__)
            return None

    async def say_held(self, entry: OutboxEntry) -> bool:
        """Try a held entry now, unless another instance took it meanwhile (this one was slow:
        the other says it); whether it was said now."""
        try:
            if not await self.store.claim(entry, until=self._app.clock.now() + CLAIM):
                return False
            return await self.deliver(entry)
        except Exception as error:  # the database went away: the worker goes on
            log.warning("slack: what is owed waits: %s", type(error).__name__)
            return False

    async def drop(self, entry: OutboxEntry) -> None:
        """Forget a held entry whose moment did not come (an answer refused)."""
        try:
            await self.store.done(entry.entry_id)
        except Exception as error:  # the database away: the worker finds it moot
            log.warning("slack: what is no longer owed stays: %s", type(error).__name__)

    async def post_as(self, entry: OutboxEntry, payload: Mapping[str, Any]) -> None:
        """Deliver ``entry`` as a post of ``payload`` (as ``post`` records it): for a kind
        that decides what to post only when delivered."""
        await self._post(replace(entry, payload=payload))

    async def _try_unrecorded(self, entry: OutboxEntry) -> bool:
        try:
            await self._kinds[entry.kind](entry)
        except NotYet:
            return False
        except (SlackApiError, *TRANSPORT_ERRORS, ChannelUnavailableError) as error:
            if not _transient(error):
                log.warning("slack: a message was not said: %s", _failure(error))
                return False
            raise ChannelUnavailableError(
                f"Slack could not take it now ({_failure(error)}) and it could not be kept owed"
            ) from error
        return True

    # ---------------------------------------------------------------- delivering

    async def deliver_due(self) -> int:
        """Deliver what is due (claimed: one instance at a time); how many were said. One is
        tried first: while Slack fails, the rest is not claimed (nor counted as tried); after a
        failure in a batch, the rest waits for the next call."""
        said = await self._deliver_some(1)
        return said + (await self._deliver_some(BATCH) if said else 0)

    async def _deliver_some(self, limit: int) -> int:
        now = self._app.clock.now()
        due = await self.store.claim_due(CHANNEL, now=now, until=now + CLAIM, limit=limit)
        said = 0
        for index, entry in enumerate(due):
            if await self.deliver(entry):
                said += 1
                continue
            if (await self.store.get(entry.entry_id)) is not None:  # still owed: Slack away
                for left in due[index + 1 :]:
                    await self.store.retry_at(left.entry_id, self._app.clock.now())
                break
        return said

    async def deliver(self, entry: OutboxEntry) -> bool:
        """Try ``entry`` (claimed); done (or dropped) unless Slack may take it later."""
        try:
            if await self._moot(entry):
                await self.store.done(entry.entry_id)
                return False
            with speaking_for(entry.tenant_id or None):
                await self._kinds[entry.kind](entry)
        except NotYet:
            await self.store.retry_at(entry.entry_id, self._later(entry))
            return False
        except (SlackApiError, *TRANSPORT_ERRORS, ChannelUnavailableError) as error:
            if _transient(error):
                self._failing = True
                await self.store.retry_at(
                    entry.entry_id, self._later(entry, error), error=_failure(error)
                )
                return False
            log.warning("slack: %s was not said: %s", entry.kind, _failure(error))
        await self.store.done(entry.entry_id)
        if self._failing:  # Slack is back: what waits out a backoff is tried now
            self._failing = False
            await self.store.wake(CHANNEL, now=self._app.clock.now())
        return True

    async def _moot(self, entry: OutboxEntry) -> bool:
        if not entry.payload.get("moot_when_closed") or entry.pause_id is None:
            return False
        pause = await self._app.find_pause(entry.pause_id, tenant_id=entry.tenant_id)
        return pause is None or pause.status is not PauseStatus.PENDING

    def _later(self, entry: OutboxEntry, error: BaseException | None = None) -> datetime:
        wait = min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** max(0, entry.attempts - 1))
        asked = retry_after(error) if error is not None else None
        if asked is not None:
            wait = min(MAX_RETRY_AFTER, max(wait, asked))
        later: datetime = self._app.clock.now() + wait
        return later

    # ---------------------------------------------------------------- the kinds

    async def _post(self, entry: OutboxEntry) -> None:
        p = entry.payload
        channel, thread_ts, mark = str(p["channel"]), p.get("thread_ts"), dict(p["mark"])
        posted: Mapping[str, Any] | None = None
        if entry.attempts > 1:  # tried before: it may be there
            posted = await find_marked(
                self._client,
                mark,
                channel=channel,
                thread_ts=thread_ts,
                since=None if thread_ts else entry.created_at,
                strict=True,
            )
        if posted is None:
            response = await self._client.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                text=str(p["text"]),
                blocks=p.get("blocks"),
                metadata=mark,
            )
            posted = {"channel": response.get("channel"), "ts": response["ts"]}
        if p.get("note") and entry.pause_id is not None and thread_ts is not None:
            note = NoteRef(
                channel_id=str(posted.get("channel") or channel),
                ts=str(posted["ts"]),
                thread_ts=str(thread_ts),
            )
            await self._notes.add(entry.pause_id, note, self._app.clock.now())

    async def _update_note(self, entry: OutboxEntry) -> None:
        assert entry.pause_id is not None
        await self._say_note_update(
            entry.pause_id, str(entry.payload["text"]), entry.payload.get("blocks")
        )

    async def _say_note_update(self, pause_id: str, text: str, blocks: Any) -> None:
        note = await self._notes.get(pause_id)
        if note is None:
            if await self.store.get(note_key(pause_id)) is not None:
                raise NotYet  # the note itself is still owed: its update after it
            return  # the request has no note
        await self._client.chat_update(
            channel=note.channel_id, ts=note.ts, text=text, blocks=blocks
        )


def retry_after(error: BaseException) -> timedelta | None:
    """Slack's ``Retry-After`` on a 429 it answered, if any."""
    if not isinstance(error, SlackApiError):
        return None
    headers = getattr(error.response, "headers", None) or {}
    for name, value in dict(headers).items():
        if str(name).lower() == "retry-after":
            try:
                return timedelta(seconds=float(value[0] if isinstance(value, list) else value))
            except (TypeError, ValueError):
                return None
    return None


def _transient(error: BaseException) -> bool:
    return isinstance(error, ChannelUnavailableError) or is_transient(error)


def _failure(error: BaseException) -> str:
    return "unavailable" if isinstance(error, ChannelUnavailableError) else failure_of(error)
