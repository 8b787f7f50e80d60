"""``message``: a reply in an approval message's thread answers it; a DM starts work.

One catch-all listener (Bolt runs only the first that matches, notes G4). Ignored: bots (any
``bot_id``), every subtype (edits, deletions, joins…), top-level channel messages, and
threads where no question waits.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.answering import Answerer, ReplyPlace
from bot.slack.feedback import Audience
from bot.slack.payloads import SlackPayload, tenant_of, text_at, without_mention
from bot.slack.services import SlackServices
from bot.slack.threads import SlackThread


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, tasks = services.flows, services.tasks

    async def on_message(event: SlackPayload, context: AsyncBoltContext) -> None:
        if event.get("subtype") is not None or event.get("bot_id") is not None:
            return
        user, channel, ts = text_at(event, "user"), text_at(event, "channel"), text_at(event, "ts")
        tenant, team = tenant_of(context), context.team_id
        text = without_mention(text_at(event, "text") or "", context.bot_user_id)
        if not (user and channel and ts and tenant and team and text):
            return
        thread_ts = text_at(event, "thread_ts")
        if thread_ts is not None and thread_ts != ts:
            who = Answerer(
                user=user,
                team=team,
                tenant_id=tenant,
                audience=Audience(user=user, channel=channel, thread_ts=thread_ts),
            )
            place = ReplyPlace(channel=channel, thread_ts=thread_ts)
            tasks.spawn(flows.thread_reply(who, place, text), name="slack thread reply")
        elif text_at(event, "channel_type") == "im":
            thread = SlackThread(team=team, channel=channel, ts=ts)
            tasks.spawn(
                flows.start(thread, tenant_id=tenant, user=user, text=text, reply=False),
                name="slack direct message",
            )

    bolt.event("message")(on_message)
