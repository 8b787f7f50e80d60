"""What the application declares, as the Slack side needs it: the kit's ``KitCatalog`` with
the Slack channels' own configuration (where they post, who may answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from bot.app import App
from bot.core.enums import PauseAnswerer
from channels.kit.catalog import Implementation, KitCatalog, config_in

CONFIG_ATTRIBUTE: Final = "__countersign_slack__"


@dataclass(frozen=True, slots=True, kw_only=True)
class SlackChannelConfig:
    """Put on a class by ``channels.slack.slack_channel``: where it posts, who may answer."""

    conversation: str | None
    """Where a CHANNEL role asks (and a THREAD_OWNER role whose thread is not a Slack one);
    None only for a THREAD_OWNER role: it asks in the owner's Slack thread alone."""
    approvers: tuple[str, ...]
    answered_by: PauseAnswerer
    role: str
    escalate_to: tuple[str, ...] = ()
    """User and user-group ids that may answer too once a question is escalated."""
    escalation_conversation: str | None = None
    """Where an escalated question is asked again (a copy with the same buttons); None: in
    the question's own thread, mentioning ``escalate_to``."""


def slack_config_of(cls: type) -> SlackChannelConfig | None:
    return config_in(cls, CONFIG_ATTRIBUTE, SlackChannelConfig)


SlackImplementation = Implementation[SlackChannelConfig]


class Catalog(KitCatalog[SlackChannelConfig]):
    """The kit's view of the assembly, with the application's Slack channels."""

    def __init__(self, app: App) -> None:
        super().__init__(app, slack_config_of)

    def slack_channel(self, implementation: str) -> SlackImplementation | None:
        """The Slack channel named ``implementation`` (a pause's ``channel``), if it is one."""
        return self.implementation(implementation)

    def slack_channel_of_role(self, role: str) -> SlackImplementation | None:
        """The Slack channel implementing the role named ``role`` (one per application)."""
        return self.of_role(role)
