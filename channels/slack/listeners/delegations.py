"""The App Home's delegations: "End now", "Hand my questions to someone…" and its modal."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.kit.texts import DELEGATION_ENDED
from channels.slack.feedback import Audience
from channels.slack.payloads import SlackPayload, state_values, tenant_of, text_at
from channels.slack.render_delegations import (
    DELEGATION_MODAL,
    END_DELEGATION_ACTION,
    START_DELEGATION_ACTION,
)
from channels.slack.services import SlackServices


def register(bolt: AsyncApp, services: SlackServices) -> None:
    delegations, home, tasks = services.delegations, services.home, services.tasks
    feedback = services.feedback

    async def on_end(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        await ack()
        delegation_id = text_at(action, "value")
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        if delegation_id is None or user is None or tenant is None:
            return

        async def end_then_publish() -> None:
            said = await delegations.end(delegation_id, tenant_id=tenant, user=user)
            if said != DELEGATION_ENDED:  # refused: the Home alone would not say why
                await feedback.tell(Audience(user=user), said)
            await home.publish(tenant_id=tenant, user=user)

        tasks.spawn(end_then_publish(), name="slack end delegation")

    async def on_start(ack: AsyncAck, body: SlackPayload) -> None:
        await ack()
        trigger_id = text_at(body, "trigger_id")
        if trigger_id is not None:  # it lives 3 s
            tasks.spawn(delegations.open_modal(trigger_id), name="slack delegation", urgent=True)

    async def on_submit(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        if user is None or tenant is None:
            await ack()
            return
        started = await delegations.start(state_values(view), tenant_id=tenant, user=user)
        if isinstance(started, dict):  # nothing made: the modal stays open with why
            await ack(response_action="errors", errors=started)
            return
        await ack()
        # the delegator's Home at once (they may not have opened it since this process started);
        # the delegate's is refreshed with the notice (``SlackDelegations.tell_delegate``)
        tasks.spawn(home.publish(tenant_id=tenant, user=user), name="slack home")

    bolt.action(END_DELEGATION_ACTION)(on_end)
    bolt.action(START_DELEGATION_ACTION)(on_start)
    bolt.view(DELEGATION_MODAL)(on_submit)
