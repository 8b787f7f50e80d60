"""Modal submissions: the reject reason, an answer instead of the tool, and the edited
arguments (validated before the ack)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Literal

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.answering import Answerer, ModalAnswer
from channels.slack.feedback import Audience
from channels.slack.flows import TAMPERED
from channels.slack.late_answers import after_of
from channels.slack.payloads import SlackPayload, state_values, tenant_of, text_at
from channels.slack.render import EDIT_MODAL, REJECT_MODAL, RESPOND_MODAL
from channels.slack.render_modal import REASON_BLOCK, RESPONSE_BLOCK
from channels.slack.services import SlackServices
from channels.slack.signing import ModalMetadata


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, tasks, late = services.flows, services.tasks, services.late

    async def in_time(
        ack: AsyncAck, recording: Coroutine[Any, Any, ModalAnswer], who: Answerer, kind: str
    ) -> ModalAnswer | None:
        """The answer recorded within Slack's 3 s; else ``None``: the modal is closed now,
        the person told, and the recording finished after the ack (``LateAnswers``)."""
        future = asyncio.ensure_future(recording)
        answer = await late.within_budget(future)
        if answer is None:
            await ack()
            tasks.spawn(late.finish_late(after_of(future), who.audience), name=f"slack {kind}")
        return answer

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
        answer = await in_time(ack, record(metadata, who, values), who, kind)  # before the 200
        if answer is None:
            return
        if answer.errors:  # e.g. a reason its role requires: nothing recorded, the modal stays
            await ack(response_action="errors", errors=answer.errors)
            return
        await ack()
        tasks.spawn(answer.after(), name=f"slack {kind}")

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

        answer = await in_time(ack, checked_and_recorded(), who, "edit")  # before the 200
        if answer is None:
            return
        if answer.errors:  # invalid, or refused by the runtime's checks: nothing recorded
            await ack(response_action="errors", errors=answer.errors)
            return
        await ack()
        tasks.spawn(answer.after(), name="slack edit")

    bolt.view(REJECT_MODAL)(on_reject)
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
