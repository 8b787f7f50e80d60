"""Bolt listeners: each one translates a Slack payload into one call of the services.

Registration order matters (Bolt runs the first listener that matches): every subscribed
event type has exactly one listener, so none of them answers Slack with a 404 (notes G3).
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from channels.slack.listeners import (
    actions,
    commands,
    delegations,
    grants,
    handing,
    home,
    mentions,
    messages,
    settings,
    turns,
    views,
)
from channels.slack.services import SlackServices


def register(bolt: AsyncApp, services: SlackServices) -> None:
    actions.register(bolt, services)
    turns.register(bolt, services)
    views.register(bolt, services)
    grants.register(bolt, services)
    handing.register(bolt, services)
    delegations.register(bolt, services)
    commands.register(bolt, services)
    home.register(bolt, services)
    mentions.register(bolt, services)
    messages.register(bolt, services)
    settings.register(bolt, services)
