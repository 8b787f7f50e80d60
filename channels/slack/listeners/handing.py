"""Reassign: the button opens the modal; its submission hands the question on (before the ack,
so a refusal keeps the modal open with why)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.answering import Answerer, ModalAnswer
from channels.slack.button_values import read_answer_value
from channels.slack.feedback import Audience
from channels.slack.flows import TAMPERED
from channels.slack.listeners.clickers import clicker
from channels.slack.payloads import (
    SlackPayload,
    state_values,
    tenant_of,
    text_at,
)
from channels.slack.render_approvals import (
    REASSIGN_BLOCK,
    REASSIGN_MODAL,
    REASSIGN_PATTERN,
    REASSIGN_USER,
)
from channels.slack.services import SlackServices


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, tasks, handing, late = services.flows, services.tasks, services.handing, services.late

    async def on_click(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        await ack()
        value = text_at(action, "selected_option", "value")  # the menu's one option
        who = clicker(body, context)
        if value is None or who is None:
            return
        trigger_id = text_at(body, "trigger_id") or ""
        modal = flows.open_modal("reassign", read_answer_value(value), who, trigger_id)
        tasks.spawn(modal, name="slack reassign", urgent=True)  # trigger_id lives 3 s

    async def on_submit(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        sealed = text_at(view, "private_metadata") or ""
        metadata = flows.open_metadata(sealed, kind="reassign", user=user) if user else None
        if metadata is None or user is None or tenant is None:
            await ack(response_action="errors", errors={REASSIGN_BLOCK: TAMPERED})
            return
        audience = Audience(
            user=user,
            channel=metadata.channel,
            thread_ts=metadata.thread_ts,
            response_url=metadata.response_url,
        )
        who = Answerer(user=user, team=context.team_id, tenant_id=tenant, audience=audience)
        chosen = state_values(view).get(REASSIGN_BLOCK, {}).get(REASSIGN_USER, {})
        to = chosen.get("selected_user")

        async def handed_on() -> ModalAnswer:
            done = await handing.reassign(metadata, who, to if isinstance(to, str) else None)
            return ModalAnswer(errors=done) if isinstance(done, dict) else ModalAnswer(after=done)

        # before the 200: a refusal (or a failure) keeps the modal open with why
        await late.modal_recorded(
            ack, handed_on(), audience, tasks, block=REASSIGN_BLOCK, name="reassigned"
        )

    bolt.action(REASSIGN_PATTERN)(on_click)  # a turn item's too (``:3``)
    bolt.view(REASSIGN_MODAL)(on_submit)
