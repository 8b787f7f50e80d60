"""``app_mention``: a mention of the bot starts the entry workflow in the mention's thread.

A mention in a thread where a question waits is a reply to it: the ``message`` listener
answers that one, and this one leaves it alone.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.payloads import SlackPayload, tenant_of, text_at, without_mention
from channels.slack.services import SlackServices
from channels.slack.threads import SlackThread


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, tasks = services.flows, services.tasks

    async def on_mention(event: SlackPayload, context: AsyncBoltContext) -> None:
        user, channel, ts = text_at(event, "user"), text_at(event, "channel"), text_at(event, "ts")
        tenant, team = tenant_of(context), context.team_id
        if event.get("bot_id") is not None or not (user and channel and ts and tenant and team):
            return
        thread_ts = text_at(event, "thread_ts")
        thread = SlackThread(team=team, channel=channel, ts=thread_ts or ts)
        text = without_mention(text_at(event, "text") or "", context.bot_user_id)
        in_thread = thread_ts is not None
        tasks.spawn(
            flows.start(thread, tenant_id=tenant, user=user, text=text, reply=in_thread),
            name="slack mention",
        )

    bolt.event("app_mention")(on_mention)
