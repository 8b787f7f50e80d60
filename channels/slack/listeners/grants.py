"""Standing grants: "Approve and allow similar…" (its modal opened, then submitted) and the
App Home's Revoke buttons."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.kit.grants import SCOPE_FIELD
from channels.slack.answering import Answerer
from channels.slack.feedback import Audience
from channels.slack.listeners.clickers import clicker
from channels.slack.payloads import (
    SlackPayload,
    state_values,
    tenant_of,
    text_at,
)
from channels.slack.render_grants import GRANT_MODAL, GRANT_PATTERN, REVOKE_GRANT_PATTERN
from channels.slack.services import SlackServices

GRANT_FAILED_AT = SCOPE_FIELD
"""Where the modal says its recording failed ("try again"): its first field."""


def register(bolt: AsyncApp, services: SlackServices) -> None:
    grants, home, tasks, late = services.grants, services.home, services.tasks, services.late

    async def on_grant_click(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        await ack()
        who = clicker(body, context)
        value = text_at(action, "value")
        if who is None or value is None:
            return
        trigger_id = text_at(body, "trigger_id") or ""
        opening = grants.open_modal(value, who, trigger_id)
        tasks.spawn(opening, name="slack grant", urgent=True)  # trigger_id lives 3 s

    async def on_grant_submit(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        if user is None or tenant is None:
            await ack()
            return
        sealed = text_at(view, "private_metadata") or ""
        metadata = grants.open_metadata(sealed, user=user)
        audience = Audience(
            user=user,
            channel=None if metadata is None else metadata.channel,
            thread_ts=None if metadata is None else metadata.thread_ts,
            response_url=None if metadata is None else metadata.response_url,
        )
        who = Answerer(user=user, team=context.team_id, tenant_id=tenant, audience=audience)
        recording = grants.record(metadata, who, state_values(view))  # before the 200
        await late.modal_recorded(
            ack, recording, audience, tasks, block=GRANT_FAILED_AT, name="grant"
        )

    async def on_revoke(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        await ack()
        who = clicker(body, context)
        grant_id = text_at(action, "value")
        if who is None or grant_id is None:
            return

        async def revoke_then_publish() -> None:
            said = await grants.revoke(grant_id, who)
            await home.publish(tenant_id=who.tenant_id, user=who.user, notice=said)

        tasks.spawn(revoke_then_publish(), name="slack revoke grant")

    bolt.action(GRANT_PATTERN)(on_grant_click)  # a turn item's too (``:3``)
    bolt.action(REVOKE_GRANT_PATTERN)(on_revoke)
    bolt.view(GRANT_MODAL)(on_grant_submit)
