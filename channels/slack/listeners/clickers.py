"""Who clicked: the Slack user of an interaction, answering in its workspace's tenant, told
where the click came from (``interaction_audience``). One translation for every listener of
a click (buttons, menus, a turn's batches, grants)."""

from __future__ import annotations

from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.answering import Answerer
from channels.slack.payloads import SlackPayload, interaction_audience, tenant_of, text_at


def clicker(body: SlackPayload, context: AsyncBoltContext) -> Answerer | None:
    """The person who clicked, or ``None`` for a payload without a user or a tenant."""
    user, tenant = text_at(body, "user", "id"), tenant_of(context)
    if user is None or tenant is None:
        return None
    audience = interaction_audience(body, user)
    return Answerer(user=user, team=context.team_id, tenant_id=tenant, audience=audience)
