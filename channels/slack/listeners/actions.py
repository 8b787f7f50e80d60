"""Button clicks: Approve, Reject / Edit & approve / Answer instead (modals), list pages, and
a list's batches (Approve all, Approve selected, Reject selected…, its checkboxes)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, assert_never

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.answering import AfterAck, Answerer
from channels.slack.button_values import read_answer_value
from channels.slack.listeners.clickers import clicker
from channels.slack.payloads import (
    SlackPayload,
    state_values,
    text_at,
)
from channels.slack.render import ACTION_ID_PATTERN, action_kind
from channels.slack.render_batch_items import picked_values
from channels.slack.render_edit import StateValues
from channels.slack.services import SlackServices


def register(bolt: AsyncApp, services: SlackServices) -> None:
    flows, batches = services.flows, services.batches
    tasks, late = services.tasks, services.late

    async def recorded_then_acked(
        ack: AsyncAck, recording: Coroutine[Any, Any, AfterAck], who: Answerer, kind: str
    ) -> None:
        """Recorded before the 200 (``LateAnswers.click_recorded``: in time, late, or failed
        and told to try again); the rest follows the ack."""
        await late.click_recorded(ack, recording, who.audience, tasks, kind)

    async def on_click(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        kind = action_kind(text_at(action, "action_id") or "")
        value, who = text_at(action, "value"), clicker(body, context)
        if kind is None or value is None or who is None:
            await ack()
            return
        trigger_id = text_at(body, "trigger_id") or ""
        match kind:
            case "approve":
                shown = read_answer_value(value)  # the question and the proposal shown
                await recorded_then_acked(ack, flows.record_approval(shown, who), who, kind)
            case "reject" | "edit" | "respond":
                await ack()
                modal = flows.open_modal(kind, read_answer_value(value), who, trigger_id)
                tasks.spawn(modal, name=f"slack {kind}", urgent=True)  # trigger_id lives 3 s
            case "batch":  # Approve all: as Approve, each item
                await recorded_then_acked(ack, batches.record_all(value, who), who, kind)
            case "batch-selected":  # as Approve all, of what is ticked on the surface
                picked = picked_values(_state_of(body))
                await recorded_then_acked(ack, batches.record_selected(picked, who), who, kind)
            case "batch-reject":
                await ack()
                modal = batches.open_reject(picked_values(_state_of(body)), who, trigger_id)
                tasks.spawn(modal, name="slack batch reject", urgent=True)  # trigger_id: 3 s
            case "pick":  # a checkbox ticked: nothing is answered until a batch button
                await ack()
            case "page":
                await ack()
                if value.isdigit():
                    tasks.spawn(flows.page(who, int(value)), name="slack pending page")
            case _:
                assert_never(kind)

    bolt.action(ACTION_ID_PATTERN)(on_click)


def _state_of(body: SlackPayload) -> StateValues:
    """What is ticked on the surface clicked: a message's ``state``, or the App Home's."""
    if text_at(body, "container", "type") == "view":
        return state_values(body.get("view"))
    return state_values(body)
