"""``message``: a reply in an approval message's thread answers it; a DM starts work.

One catch-all listener (Bolt runs only the first that matches, notes G4). Ignored: bots (any
``bot_id``), every subtype (edits, deletions, joins…), top-level channel messages, and
threads where no question waits.

Bolt acknowledges an event by itself, after its listener middleware: a thread reply is read and
recorded there (``record_reply_first``), so a reply Slack saw acknowledged is never lost; the
listener then continues the run after the ack. A reply whose recording fails (the database
refused) is acknowledged too, and its writer told in the thread to try again: an event Bolt
answered 500 would be claimed, and Slack's retries of it dropped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.answering import AfterAck, Answerer, ReplyPlace
from channels.slack.feedback import Audience
from channels.slack.payloads import SlackPayload, tenant_of, text_at, without_mention
from channels.slack.services import SlackServices
from channels.slack.threads import SlackThread

AFTER_ACK: Final = "countersign_after_ack"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Message:
    user: str
    team: str
    tenant: str
    channel: str
    ts: str
    thread_ts: str | None
    text: str

    @property
    def in_a_thread(self) -> bool:
        return self.thread_ts is not None and self.thread_ts != self.ts


def message_of(event: SlackPayload, context: AsyncBoltContext) -> _Message | None:
    """What the listeners read of a person's message; None for what they ignore."""
    if event.get("subtype") is not None or event.get("bot_id") is not None:
        return None
    user, channel, ts = text_at(event, "user"), text_at(event, "channel"), text_at(event, "ts")
    tenant, team = tenant_of(context), context.team_id
    text = without_mention(text_at(event, "text") or "", context.bot_user_id)
    if not (user and channel and ts and tenant and team and text):
        return None
    return _Message(
        user=user,
        team=team,
        tenant=tenant,
        channel=channel,
        ts=ts,
        thread_ts=text_at(event, "thread_ts"),
        text=text,
    )


Middleware = Callable[
    [SlackPayload, AsyncBoltContext, Callable[[], Awaitable[None]]], Awaitable[None]
]


def record_reply_first(services: SlackServices) -> Middleware:
    """The listener middleware that reads and records a thread reply before its ack (its
    continuation in ``context[AFTER_ACK]``; none there when no question waits in the thread)."""
    flows = services.flows

    async def record(
        event: SlackPayload, context: AsyncBoltContext, next: Callable[[], Awaitable[None]]
    ) -> None:
        message = message_of(event, context)
        if message is not None and message.in_a_thread:
            assert message.thread_ts is not None
            who = Answerer(
                user=message.user,
                team=message.team,
                tenant_id=message.tenant,
                audience=Audience(
                    user=message.user, channel=message.channel, thread_ts=message.thread_ts
                ),
            )
            place = ReplyPlace(channel=message.channel, thread_ts=message.thread_ts, ts=message.ts)
            try:
                context[AFTER_ACK] = await flows.record_thread_reply(who, place, message.text)
            except Exception as error:  # the database refused: answered, told to try again
                context[AFTER_ACK] = services.late.failed(error, who.audience)
        await next()

    return record


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, tasks = services.flows, services.tasks

    async def on_message(event: SlackPayload, context: AsyncBoltContext) -> None:
        message = message_of(event, context)
        if message is None:
            return
        if message.in_a_thread:
            after: AfterAck | None = context.get(AFTER_ACK)
            if after is not None:
                tasks.spawn(after(), name="slack thread reply")
        elif text_at(event, "channel_type") == "im":
            thread = SlackThread(team=message.team, channel=message.channel, ts=message.ts)
            tasks.spawn(
                flows.start(
                    thread,
                    tenant_id=message.tenant,
                    user=message.user,
                    text=message.text,
                    reply=False,
                ),
                name="slack direct message",
            )

    bolt.event("message", middleware=[record_reply_first(services)])(on_message)
