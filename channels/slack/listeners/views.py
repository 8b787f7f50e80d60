"""Modal submissions: the reject reason, and the edited arguments (validated before the ack)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.answering import Answerer
from channels.slack.feedback import Audience
from channels.slack.flows import TAMPERED
from channels.slack.payloads import SlackPayload, state_values, tenant_of, text_at
from channels.slack.render import EDIT_MODAL, REJECT_MODAL
from channels.slack.render_modal import REASON_BLOCK
from channels.slack.services import SlackServices
from channels.slack.signing import ModalMetadata


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, tasks = services.flows, services.tasks

    async def on_reject(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        sealed = text_at(view, "private_metadata") or ""
        metadata = (
            flows.open_metadata(sealed, kind="reject", user=user) if user and tenant else None
        )
        if metadata is None or user is None or tenant is None:
            await ack(response_action="errors", errors={REASON_BLOCK: TAMPERED})
            return
        who = _answerer(metadata, user, tenant, context)
        after = await flows.record_reject(metadata, who, state_values(view))  # before the 200
        await ack()
        tasks.spawn(after(), name="slack reject")

    async def on_edit(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        values = state_values(view)
        if user is None or tenant is None:
            await ack(response_action="errors", errors={next(iter(values), "value"): TAMPERED})
            return
        checked = await flows.check_edit(
            text_at(view, "private_metadata") or "", user=user, tenant_id=tenant, values=values
        )
        if checked.errors:
            await ack(response_action="errors", errors=checked.errors)
            return
        if checked.metadata is None:
            await ack()
            return
        who = _answerer(checked.metadata, user, tenant, context)
        after = await flows.record_edit(checked, who)  # before the 200
        await ack()
        tasks.spawn(after(), name="slack edit")

    bolt.view(REJECT_MODAL)(on_reject)
    bolt.view(EDIT_MODAL)(on_edit)


def _answerer(
    metadata: ModalMetadata, user: str, tenant: str, context: AsyncBoltContext
) -> Answerer:
    audience = Audience(
        user=user,
        channel=metadata.channel,
        thread_ts=metadata.thread_ts,
        response_url=metadata.response_url,
    )
    return Answerer(user=user, team=context.team_id, tenant_id=tenant, audience=audience)
