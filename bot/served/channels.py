"""Where a served graph's questions are asked: the implementations of its roles.

In Slack (``slack_roles``): with approvers, in the approval channel, answered by them;
without, by whoever asked, in their own thread (an assistant thread included). On the web
desk (``web_roles``): by its one person, in their inbox.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bot.core.enums import PauseAnswerer
from bot.served.application import Implement
from channels.slack import slack_channel
from channels.web import web_channel


@dataclass(frozen=True, slots=True, kw_only=True)
class Roles:
    """Who answers the roles, and the implementation each role gets."""

    answered_by: PauseAnswerer
    implement: Implement


def slack_roles(approval_channel: str | None, approvers: Sequence[str]) -> Roles:
    """Asked in Slack: by ``approvers`` in ``approval_channel``, or by the requester."""
    answered_by = PauseAnswerer.CHANNEL if approvers else PauseAnswerer.THREAD_OWNER

    def implement(role: type, name: str) -> type:
        return slack_channel(
            role,
            name=f"slack-{name}-channel",
            conversation=approval_channel,
            approvers=tuple(approvers),
        )

    return Roles(answered_by=answered_by, implement=implement)


WEB_PERSON: Final = "you"
"""Who answers on the web desk (its one person; ``bot.desk.web.DESK_PERSON`` too)."""


def web_roles(approvers: Sequence[str] = (WEB_PERSON,)) -> Roles:
    """Asked on the web: by ``approvers`` (the web desk's one person), in their inbox."""

    def implement(role: type, name: str) -> type:
        return web_channel(role, name=f"web-{name}-channel", approvers=list(approvers))

    return Roles(answered_by=PauseAnswerer.CHANNEL, implement=implement)
