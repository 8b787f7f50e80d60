"""Button clicks: Approve, Reject / Edit & approve / Answer instead (modals), list pages."""

from __future__ import annotations

import asyncio
from typing import assert_never

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.answering import Answerer
from channels.slack.payloads import SlackPayload, interaction_audience, tenant_of, text_at
from channels.slack.render import ACTION_ID_PATTERN, action_kind
from channels.slack.services import SlackServices


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, tasks, late = services.flows, services.tasks, services.late

    async def on_click(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        kind = action_kind(text_at(action, "action_id") or "")
        value = text_at(action, "value")
        user = text_at(body, "user", "id")
        tenant = tenant_of(context)
        if kind is None or value is None or user is None or tenant is None:
            await ack()
            return
        who = Answerer(
            user=user,
            team=context.team_id,
            tenant_id=tenant,
            audience=interaction_audience(body, user),
        )
        trigger_id = text_at(body, "trigger_id") or ""
        match kind:
            case "approve":
                # recorded before the 200: Slack never sends an acknowledged click again; one
                # not recorded within Slack's 3 s is answered anyway, and finished after it
                recording = asyncio.ensure_future(flows.record_approval(value, who))
                after = await late.within_budget(recording)
                await ack()
                if after is None:
                    tasks.spawn(late.finish_late(recording, who.audience), name="slack late")
                else:
                    tasks.spawn(after(), name="slack approve")
            case "reject" | "edit" | "respond":
                await ack()
                modal = flows.open_modal(kind, value, who, trigger_id)
                tasks.spawn(modal, name=f"slack {kind}", urgent=True)  # trigger_id lives 3 s
            case "batch":  # as Approve: recorded before the 200, finished after it if late
                recording = asyncio.ensure_future(flows.record_batch(value, who))
                after = await late.within_budget(recording)
                await ack()
                if after is None:
                    tasks.spawn(late.finish_late(recording, who.audience), name="slack late")
                else:
                    tasks.spawn(after(), name="slack approve all")
            case "page":
                await ack()
                if value.isdigit():
                    tasks.spawn(flows.page(who, int(value)), name="slack pending page")
            case _:
                assert_never(kind)

    bolt.action(ACTION_ID_PATTERN)(on_click)
