"""``/pending``: the caller's list, ephemeral, sent after the ack through ``response_url``."""

from __future__ import annotations

from typing import Final

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.answering import Answerer
from channels.slack.feedback import Audience
from channels.slack.payloads import SlackPayload, tenant_of, text_at
from channels.slack.services import SlackServices

PENDING_COMMAND: Final = "/pending"


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, tasks = services.flows, services.tasks

    async def on_pending(ack: AsyncAck, command: SlackPayload, context: AsyncBoltContext) -> None:
        await ack()
        user, tenant = text_at(command, "user_id"), tenant_of(context)
        response_url = text_at(command, "response_url")
        if user is None or tenant is None or response_url is None:
            return
        audience = Audience(
            user=user, channel=text_at(command, "channel_id"), response_url=response_url
        )
        who = Answerer(user=user, team=context.team_id, tenant_id=tenant, audience=audience)
        tasks.spawn(flows.pending(who, response_url), name="slack /pending")

    bolt.command(PENDING_COMMAND)(on_pending)
