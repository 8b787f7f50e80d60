"""The App Home's settings (installed by OAuth): "Change" opens the form, its submission saves
(validated before the ack, so a mistake stays in the form), "Use the defaults" clears; each then
publishes the admin's Home again."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from channels.slack.payloads import SlackPayload, state_values, tenant_of, text_at
from channels.slack.render_settings import CHANGE_ACTION, RESET_ACTION, SETTINGS_MODAL
from channels.slack.services import SlackServices


def register(bolt: AsyncApp, services: SlackServices) -> None:
    settings, home, tasks = services.settings, services.home, services.tasks
    if settings is None:  # one workspace: its settings are .env's
        return

    async def on_change(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        await ack()
        clicked = _clicked(body, action, context)
        if clicked is None:
            return
        tenant, user, implementation = clicked
        form = settings.open_form(
            tenant_id=tenant,
            user=user,
            implementation=implementation,
            trigger_id=text_at(body, "trigger_id") or "",
        )
        tasks.spawn(form, name="slack settings form", urgent=True)  # trigger_id lives 3 s

    async def on_reset(
        ack: AsyncAck, body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
    ) -> None:
        await ack()
        clicked = _clicked(body, action, context)
        if clicked is None:
            return
        tenant, user, implementation = clicked

        async def reset() -> None:
            await settings.reset(tenant_id=tenant, user=user, implementation=implementation)
            await home.publish(tenant_id=tenant, user=user)

        tasks.spawn(reset(), name="slack settings reset")

    async def on_submit(
        ack: AsyncAck, body: SlackPayload, view: SlackPayload, context: AsyncBoltContext
    ) -> None:
        user, tenant = text_at(body, "user", "id"), tenant_of(context)
        implementation = text_at(view, "private_metadata")
        if user is None or tenant is None or implementation is None:
            await ack()
            return
        errors = await settings.save(  # before the 200: a mistake stays in the form
            tenant_id=tenant, user=user, implementation=implementation, values=state_values(view)
        )
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        tasks.spawn(home.publish(tenant_id=tenant, user=user), name="slack home")

    bolt.action(CHANGE_ACTION)(on_change)
    bolt.action(RESET_ACTION)(on_reset)
    bolt.view(SETTINGS_MODAL)(on_submit)


def _clicked(
    body: SlackPayload, action: SlackPayload, context: AsyncBoltContext
) -> tuple[str, str, str] | None:
    """A button's tenant, user and the implementation it names; ``None`` when one is missing."""
    user, tenant = text_at(body, "user", "id"), tenant_of(context)
    implementation = text_at(action, "value")
    if user is None or tenant is None or implementation is None:
        return None
    return tenant, user, implementation
