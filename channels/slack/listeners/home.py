"""``app_home_opened``: publish the user's pending list on their Home tab."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.payloads import SlackPayload, tenant_of, text_at
from channels.slack.services import SlackServices


def register(bolt: AsyncApp, services: SlackServices) -> None:
    home, tasks = services.home, services.tasks

    async def on_home_opened(event: SlackPayload, context: AsyncBoltContext) -> None:
        user, tenant = text_at(event, "user"), tenant_of(context)
        if text_at(event, "tab") != "home" or user is None or tenant is None:
            return
        tasks.spawn(home.publish(tenant_id=tenant, user=user), name="slack home")

    bolt.event("app_home_opened")(on_home_opened)
