"""A turn message's "Approve all" click (``channels.slack.turn_answers``): recorded before the
200, as an Approve click (``LateAnswers.click_recorded``): finished after it, told late when
recording outlasts Slack's 3 s, or told to try again when it failed. Its "Reject all…" click
opens the batch reject modal (acked first: its trigger id lives 3 s), whose submission is
recorded as "Reject selected…"'s (``listeners.views``)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.listeners.clickers import clicker
from channels.slack.payloads import SlackPayload, text_at
from channels.slack.render_turn import TURN_APPROVE_ALL, TURN_REJECT_ALL
from channels.slack.services import SlackServices


def register(bolt: AsyncApp, services: SlackServices) -> None:
    turns, tasks, late = services.turns, services.tasks, services.late

    async def on_approve_all(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        value, who = text_at(action, "value"), clicker(body, context)
        channel_id = text_at(body, "container", "channel_id")
        ts = text_at(body, "container", "message_ts")
        if value is None or who is None or channel_id is None or ts is None:
            await ack()
            return
        recording = turns.record_approve_all(value, who, channel_id=channel_id, ts=ts)
        await late.click_recorded(ack, recording, who.audience, tasks, "turn approve all")

    async def on_reject_all(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        await ack()
        value, who = text_at(action, "value"), clicker(body, context)
        channel_id = text_at(body, "container", "channel_id")
        ts = text_at(body, "container", "message_ts")
        if value is None or who is None or channel_id is None or ts is None:
            return
        trigger_id = text_at(body, "trigger_id") or ""
        modal = turns.open_reject_all(
            value, who, channel_id=channel_id, ts=ts, trigger_id=trigger_id
        )
        tasks.spawn(modal, name="slack turn reject all", urgent=True)  # trigger_id lives 3 s

    bolt.action(TURN_APPROVE_ALL)(on_approve_all)
    bolt.action(TURN_REJECT_ALL)(on_reject_all)
