"""An escalated question's copy (asked again where it escalates to), owed through the outbox.

Posted straight from the escalation, a copy Slack failed (an outage) was lost for good: the
sweep records the escalation as sent once the channel's call returns or fails. Owed instead
(``ESCALATION_COPY``, keyed by the pause: owed once however often the escalation is sent
again), it is delivered once Slack takes it, rendered from the question as it then stands (no
arguments kept in the outbox), and moot once the question closed. There is no transaction to
share with the escalation's state change (the runtime records it after the channel's call): an
instance that dies between the two leaves the sweep's claim to lapse, and the escalation sent
again finds its copy owed (or posted) already.

Said once: the copy carries its mark (``nudge_mark``); an entry tried before looks for it in
the escalation conversation first, and a copy stored by another instance first is taken back.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import App
from bot.core.channel import ChannelEscalation
from bot.core.results import PauseView
from bot.store.outbox import OutboxEntry
from channels.slack.nudge_marks import find_marked, nudge_mark
from channels.slack.outbox import SlackOutbox, key_of
from channels.slack.redaction import log
from channels.slack.render import ApprovalView
from channels.slack.render_message import approval_message
from channels.slack.store import MessageRef, SlackMessageStore
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of

ESCALATION_COPY: Final = "escalation_copy"
COPY_NUDGE: Final = "escalation-copy"
"""The copy's nudge key in its mark (with the question's message: one copy per question)."""


def copy_key(pause_id: str) -> str:
    return key_of(ESCALATION_COPY, pause_id)


class EscalationCopies:
    """Owes an escalated question's copy, and delivers it."""

    def __init__(
        self,
        *,
        app: App,
        client: AsyncWebClient,
        messages: SlackMessageStore,
        outbox: SlackOutbox,
        view: Callable[[PauseView], ApprovalView],
    ) -> None:
        self._app = app
        self._client = client
        self._messages = messages
        self._outbox = outbox
        self._view = view
        outbox.deliver_kind(ESCALATION_COPY, self._deliver)

    async def owe(
        self,
        escalation: ChannelEscalation,
        question: MessageRef,
        *,
        where: str,
        implementation: str,
    ) -> bool:
        """Owe the copy of ``question`` in ``where`` and try it now; whether it was posted now
        (not: owed until Slack takes it, or posted before)."""
        if any(ref.escalated_copy for ref in await self._messages.copies(question.pause_id)):
            return False
        payload: dict[str, Any] = {
            "channel": where,
            "implementation": implementation,
            "mark": nudge_mark(question, COPY_NUDGE),
            "since": escalation.asked_at.isoformat(),
            "moot_when_closed": True,  # the question closed: nobody is asked again
        }
        return await self._outbox.owe(
            copy_key(question.pause_id),
            ESCALATION_COPY,
            payload,
            tenant_id=escalation.tenant_id,
            pause_id=question.pause_id,
            look_first=escalation.retried,  # the sweep that died may have posted it
        )

    async def _deliver(self, entry: OutboxEntry) -> None:
        """Post the copy (raises what Slack failed with), unless it is there already."""
        assert entry.pause_id is not None
        if any(ref.escalated_copy for ref in await self._messages.copies(entry.pause_id)):
            return
        pause = await self._app.find_pause(entry.pause_id, tenant_id=entry.tenant_id)
        if pause is None:
            return
        p = entry.payload
        where, mark = str(p["channel"]), dict(p["mark"])
        posted = None
        if entry.attempts > 1:  # tried before: it may be there
            since = datetime.fromisoformat(str(p["since"]))
            posted = await find_marked(self._client, mark, channel=where, since=since, strict=True)
        if posted is None:
            rendered = approval_message(self._view(pause))
            response = await self._client.chat_postMessage(
                channel=where, text=rendered.text, blocks=rendered.blocks, metadata=mark
            )
            posted = {"channel": response.get("channel"), "ts": response["ts"]}
        copy = MessageRef(
            pause_id=pause.pause_id,
            tenant_id=pause.tenant_id,
            channel_id=str(posted.get("channel") or where),
            ts=str(posted["ts"]),
            thread_ts=None,
            role=pause.role,
            implementation=str(p["implementation"]),
            escalated_copy=True,
        )
        if not await self._messages.add(copy, self._app.clock.now()):
            await self._take_back(copy)

    async def _take_back(self, copy: MessageRef) -> None:
        """Another instance stored its copy first: ours goes."""
        try:
            await self._client.chat_delete(channel=copy.channel_id, ts=copy.ts)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: a duplicate escalated copy stays: %s", failure_of(error))
