"""What the application declares, as the web side needs it: the kit's ``KitCatalog`` with the
web channels' own configuration (who may answer, the channel's notifier).

A class made by ``web_channel`` carries its configuration in its own ``__dict__`` (not
inherited), so a class that combines channels names each configuration it takes on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from bot.app import App
from bot.core.enums import PauseAnswerer
from bot.core.results import PauseView
from channels.kit.answerers import approvers_of, asked, may_answer_now, refusal_of
from channels.kit.catalog import KitCatalog, config_in
from channels.web.notify import Notifier

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
        return asked(self, owner_id)

    def may_answer(self, owner_id: str, *, escalated: bool) -> tuple[str, ...]:
        """Who may answer a question now (``channels.kit.answerers.may_answer_now``)."""
        return may_answer_now(self, owner_id, escalated=escalated)


def web_config_of(cls: type) -> WebChannelConfig | None:
    return config_in(cls, CONFIG_ATTRIBUTE, WebChannelConfig)


class WebCatalog(KitCatalog[WebChannelConfig]):
    """The kit's view of the assembly, with the application's web channels."""

    def __init__(self, app: App) -> None:
        super().__init__(app, web_config_of)

    def channel(self, implementation: str) -> WebChannelConfig | None:
        """The web channel named ``implementation`` (a pause's ``channel``), if it is one."""
        found = self.implementation(implementation)
        return None if found is None else found.config

    def refusal(self, pause: PauseView, approver: str) -> str | None:
        """Why ``approver`` may not answer ``pause`` on the web (``None``: they may), by the
        kit's rules (``channels.kit.answerers``)."""
        config = self.channel(pause.channel)
        return refusal_of(
            pause,
            approver,
            config,
            approver=config is not None and approver in approvers_of(pause, config),
            escalation=config is not None and approver in config.escalate_to,
        )
