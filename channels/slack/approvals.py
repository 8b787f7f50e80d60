"""Slack's side of a question that needs several approvals: once an approval is counted (or the
question handed on), its message (and an escalated copy) is updated to say who approved and how
many more are needed, its buttons kept for the others. The update is owed to Slack through the
outbox (``SlackGateway.owe_approvals``, the kind of a closed question's update): tried at once,
delivered again after an outage, rendered from the question as it stands when delivered (a
later approval or the outcome supersedes it)."""

from __future__ import annotations

from bot.app import App
from bot.core.results import PauseView
from channels.slack.gateway import SlackGateway


async def show_approvals(app: App, gateway: SlackGateway, pause: PauseView) -> None:
    """Bring the open messages of ``pause`` up to date with its approvals (owed until said)."""
    del app  # read when delivered: the gateway's
    await gateway.owe_approvals(pause)
