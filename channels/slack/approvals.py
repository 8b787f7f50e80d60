"""Slack's side of a question that needs several approvals: once an approval is counted, its
message (and an escalated copy) is updated to say who approved and how many more are needed,
its buttons kept for the others. Updates of two approvals at once may land in either order,
so each renders the question as the store holds it when it is sent, and checks again after:
the last update always shows the latest state (an outcome, once the question closed)."""

from __future__ import annotations

from typing import Final

from slack_sdk.errors import SlackApiError

from bot.app import App
from bot.core.enums import PauseStatus
from bot.core.results import PauseView
from channels.kit.outcomes import outcome_of
from channels.slack.gateway import SlackGateway
from channels.slack.redaction import log
from channels.slack.render import RenderedMessage
from channels.slack.render_message import approval_message, outcome_message
from channels.slack.tenant_tokens import speaking_for
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of

ROUNDS: Final = 3
"""How often the message is rendered again when the question changed while it was updated."""


def _state(pause: PauseView) -> tuple[PauseStatus, int]:
    return (pause.status, len(pause.approvals))


async def show_approvals(app: App, gateway: SlackGateway, pause: PauseView) -> None:
    """Bring the open messages of ``pause`` up to date with its approvals (best effort: a
    failed update is logged; the next approval or the outcome updates it again)."""
    latest: PauseView | None = pause
    for _ in range(ROUNDS):
        latest = await app.find_pause(pause.pause_id, tenant_id=pause.tenant_id)
        if latest is None:
            return
        refs = await gateway.messages.copies(pause.pause_id)
        if not refs:
            return
        rendered = _rendered(gateway, latest)
        if rendered is None:
            return
        with speaking_for(pause.tenant_id):
            for ref in refs:
                try:
                    await gateway.client.chat_update(
                        channel=ref.channel_id,
                        ts=ref.ts,
                        text=rendered.text,
                        blocks=rendered.blocks,
                    )
                except (SlackApiError, *TRANSPORT_ERRORS) as error:
                    log.warning("slack: an approval's message update failed: %s", failure_of(error))
                    return
        after = await app.find_pause(pause.pause_id, tenant_id=pause.tenant_id)
        if after is None or _state(after) == _state(latest):
            return


def _rendered(gateway: SlackGateway, pause: PauseView) -> RenderedMessage | None:
    """The message as ``pause`` now stands: waiting (buttons, who approved) or its outcome."""
    view = gateway.approval_view(pause)
    if pause.status is PauseStatus.PENDING:
        return approval_message(view)
    outcome = outcome_of(pause)
    return None if outcome is None else outcome_message(view, outcome)
