"""What the application declares, as the web side needs it: its web channels, their approvers
and escalation approvers, and who of them may answer a question now.

Read from the App's assembly once. A class made by ``web_channel`` carries its configuration
in its own ``__dict__`` (not inherited), as the Slack channel's do, so a class that combines
channels names each configuration it takes on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bot.app import App
from bot.components.specs import ChannelRoleSpec, ChannelSpec
from bot.core.enums import PauseAnswerer
from bot.core.results import PauseView
from channels.web.notify import Notifier
from channels.web.offers import Offered, offered

CONFIG_ATTRIBUTE: Final = "__countersign_web__"


@dataclass(frozen=True, slots=True, kw_only=True)
class WebChannelConfig:
    """Put on a class by ``channels.web.web_channel``: who may answer, for which role."""

    approvers: tuple[str, ...]
    answered_by: PauseAnswerer
    role: str
    role_description: str
    escalate_to: tuple[str, ...] = ()
    """Who may answer too once the question is escalated (``PauseTiming.escalate_after``)."""
    notify: Notifier | None = None
    """This channel's own notifier; None: the ``WebServer``'s."""

    def asked(self, owner_id: str) -> tuple[str, ...]:
        """Who a question is asked of: its approvers (a THREAD_OWNER role: its owner)."""
        if self.answered_by is PauseAnswerer.THREAD_OWNER:
            return (owner_id,)
        return self.approvers

    def may_answer(self, owner_id: str, *, escalated: bool) -> tuple[str, ...]:
        """Who may answer a question now: who it was asked of, and once it is escalated its
        ``escalate_to`` people too."""
        asked = self.asked(owner_id)
        return tuple(dict.fromkeys((*asked, *self.escalate_to))) if escalated else asked


def web_config_of(cls: type) -> WebChannelConfig | None:
    config = cls.__dict__.get(CONFIG_ATTRIBUTE)
    return config if isinstance(config, WebChannelConfig) else None


class WebCatalog:
    """The application's web channels by implementation name, and its roles by name."""

    def __init__(self, app: App) -> None:
        assembly = app.assembly
        self._channels: dict[str, WebChannelConfig] = {}
        for cls, spec in assembly.channels.items():
            config = web_config_of(cls)
            if config is not None and isinstance(spec, ChannelSpec):
                self._channels[spec.name] = config
        self._roles: dict[str, ChannelRoleSpec] = {
            spec.name: spec for spec in assembly.roles.values()
        }

    def channel(self, implementation: str) -> WebChannelConfig | None:
        """The web channel named ``implementation`` (a pause's ``channel``), if it is one."""
        return self._channels.get(implementation)

    def roles_answered_by(self, approver: str) -> Sequence[str]:
        """The CHANNEL roles whose web channel lists ``approver``."""
        return sorted(
            c.role
            for c in self._channels.values()
            if c.answered_by is PauseAnswerer.CHANNEL and approver in c.approvers
        )

    def roles_escalated_to(self, approver: str) -> Sequence[str]:
        """The CHANNEL roles whose web channel escalates to ``approver`` (and does not list
        them as an approver: those roles they answer anyway)."""
        return sorted(
            c.role
            for c in self._channels.values()
            if c.answered_by is PauseAnswerer.CHANNEL
            and approver in c.escalate_to
            and approver not in c.approvers
        )

    def owner_roles(self) -> Sequence[str]:
        """The THREAD_OWNER roles asked on the web: their owner answers."""
        return sorted(
            c.role for c in self._channels.values() if c.answered_by is PauseAnswerer.THREAD_OWNER
        )

    def role_description(self, role: str) -> str:
        spec = self._roles.get(role)
        return spec.description if spec is not None else ""

    def reads_replies(self, role: str) -> bool:
        spec = self._roles.get(role)
        return spec is not None and spec.reply_interpreter is not None

    def offers(self, pause: PauseView) -> Offered:
        """The answers the question's page offers (only those its asker takes)."""
        return offered(
            pause.ask, tool_input=pause.tool_input, reads_replies=self.reads_replies(pause.role)
        )

    def refusal(self, pause: PauseView, approver: str) -> str | None:
        """Why ``approver`` may not answer ``pause`` on the web (``None``: they may). The role's
        own rules (its owner, separation of duties) are the runtime's, checked by
        ``App.answer`` after this one."""
        match pause.answered_by:
            case PauseAnswerer.THREAD_OWNER:
                return None if approver == pause.owner_id else NOT_THE_OWNER
            case PauseAnswerer.CHANNEL:
                config = self._channels.get(pause.channel)
                if config is None:
                    return NOT_AN_APPROVER
                if approver in config.approvers:
                    return None
                if approver in config.escalate_to:  # first answer from either side wins
                    return None if pause.escalated else NOT_ESCALATED_YET
                return NOT_AN_APPROVER


NOT_AN_APPROVER: Final = "You are not one of the approvers of this request."
NOT_ESCALATED_YET: Final = (
    "This request has not been escalated to you: its approvers may still answer it. If nobody "
    "does in time, it comes to you and you may answer it then."
)
NOT_THE_OWNER: Final = "Only the person who asked for this work can answer this request."
