"""Modal submissions: the reject reason, an answer instead of the tool, and the edited
arguments (validated before the ack). Each is recorded before its 200 through
``LateAnswers.modal_recorded``: in time, late (the modal closed, the person told), or failed
(the modal stays open saying "try again")."""

from __future__ import annotations

from typing import Literal

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.answering import Answerer, ModalAnswer
from channels.slack.feedback import Audience
from channels.slack.flows import TAMPERED
from channels.slack.payloads import SlackPayload, state_values, tenant_of, text_at
from channels.slack.render import BATCH_REJECT_MODAL, EDIT_MODAL, REJECT_MODAL, RESPOND_MODAL
from channels.slack.render_modal import REASON_BLOCK, RESPONSE_BLOCK
from channels.slack.services import SlackServices
from channels.slack.signing import ModalMetadata


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, tasks, late = services.flows, services.tasks, services.late

    async def on_reject(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        await on_text("reject", ack, body, view, context)

    async def on_respond(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        await on_text("respond", ack, body, view, context)

    async def on_text(
        kind: Literal["reject", "respond"],
        ack: AsyncAck,
        body: SlackPayload,
        view: SlackPayload,
        context: AsyncBoltContext,
    ) -> None:
        """A modal of one text (a reject's reason, an answer instead of the tool)."""
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        sealed = text_at(view, "private_metadata") or ""
        metadata = flows.open_metadata(sealed, kind=kind, user=user) if user and tenant else None
        if metadata is None or user is None or tenant is None:
            block = REASON_BLOCK if kind == "reject" else RESPONSE_BLOCK
            await ack(response_action="errors", errors={block: TAMPERED})
            return
        who = _answerer(metadata, user, tenant, context)
        values = state_values(view)
        record = flows.record_reject if kind == "reject" else flows.record_respond
        block = REASON_BLOCK if kind == "reject" else RESPONSE_BLOCK
        # before the 200; its errors (a reason its role requires…) keep the modal open
        await late.modal_recorded(
            ack, record(metadata, who, values), who.audience, tasks, block=block, name=kind
        )

    async def on_edit(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        values = state_values(view)
        if user is None or tenant is None:
            await ack(response_action="errors", errors={next(iter(values), "value"): TAMPERED})
            return
        sealed = text_at(view, "private_metadata") or ""
        metadata = flows.open_metadata(sealed, kind="edit", user=user)
        if metadata is None:
            await ack(response_action="errors", errors={next(iter(values), "value"): TAMPERED})
            return
        who = _answerer(metadata, user, tenant, context)

        async def checked_and_recorded() -> ModalAnswer:
            checked = await flows.check_edit(sealed, user=user, tenant_id=tenant, values=values)
            if checked.errors:
                return ModalAnswer(errors=checked.errors)
            return await flows.record_edit(checked, who, values)  # closed: nothing recorded

        # before the 200: invalid, or refused by the runtime's checks, the modal stays open
        block = next(iter(values), "value")
        await late.modal_recorded(
            ack, checked_and_recorded(), who.audience, tasks, block=block, name="edit"
        )

    async def on_batch_reject(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        """ "Reject selected…"'s reason: each sealed question rejected with it."""
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        sealed = text_at(view, "private_metadata") or ""
        metadata = services.batches.open_metadata(sealed, user=user) if user and tenant else None
        if metadata is None or user is None or tenant is None:
            await ack(response_action="errors", errors={REASON_BLOCK: TAMPERED})
            return
        who = _answerer(metadata, user, tenant, context)
        recording = services.batches.record_reject(metadata, who, state_values(view))
        # before the 200: a blank reason, or a batch that does not open, keeps the modal open
        await late.modal_recorded(
            ack, recording, who.audience, tasks, block=REASON_BLOCK, name="batch reject"
        )

    bolt.view(REJECT_MODAL)(on_reject)
    bolt.view(BATCH_REJECT_MODAL)(on_batch_reject)
    bolt.view(RESPOND_MODAL)(on_respond)
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
