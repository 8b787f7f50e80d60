"""What the application declares, as the Slack side needs it.

Which implementations are Slack channels (and their approvers), the role each implements,
tools' input models, and the workflow a mention starts. Read from the App's assembly once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import BaseModel

from bot.app import App
from bot.components.specs import ChannelRoleSpec, ChannelSpec
from bot.core.enums import PauseAnswerer

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
    config = cls.__dict__.get(CONFIG_ATTRIBUTE)
    return config if isinstance(config, SlackChannelConfig) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class SlackImplementation:
    name: str
    config: SlackChannelConfig


class Catalog:
    """An index of the application's Slack channels, tools and entry workflow."""

    def __init__(self, app: App) -> None:
        assembly = app.assembly
        self._slack: dict[str, SlackImplementation] = {}
        for cls, spec in assembly.channels.items():
            config = slack_config_of(cls)
            if config is not None and isinstance(spec, ChannelSpec):
                self._slack[spec.name] = SlackImplementation(name=spec.name, config=config)
        self._assembly = assembly  # live: graphs attach after this (App.langgraph)
        self._roles: dict[str, ChannelRoleSpec] = {
            spec.name: spec for spec in assembly.roles.values()
        }
        application = assembly.application
        workflows = list(application.workflows)
        self.entry_workflow: type | None = application.entry_workflow or (
            workflows[0] if workflows else None
        )

    def slack_channel(self, implementation: str) -> SlackImplementation | None:
        """The Slack channel named ``implementation`` (a pause's ``channel``), if it is one."""
        return self._slack.get(implementation)

    def slack_channel_of_role(self, role: str) -> SlackImplementation | None:
        """The Slack channel implementing the role named ``role`` (one per application)."""
        return next((impl for impl in self._slack.values() if impl.config.role == role), None)

    def answered_by_channel(self) -> Sequence[SlackImplementation]:
        """The Slack channels of CHANNEL roles: the ones with approvers."""
        return [
            impl
            for impl in self._slack.values()
            if impl.config.answered_by is PauseAnswerer.CHANNEL
        ]

    def tool_input(self, tool: str, *, agent: str, role: str) -> type[BaseModel] | None:
        """What a question about ``tool`` asked by ``agent`` under ``role`` is shown by: the
        tool's input, or an attached graph's role's model."""
        binding = self._assembly.binding_of(tool, agent=agent, role=role)
        return None if binding is None else binding.spec.input

    def tool_description(self, tool: str, *, agent: str, role: str) -> str:
        binding = self._assembly.binding_of(tool, agent=agent, role=role)
        return "" if binding is None else binding.spec.description

    def role_description(self, role: str) -> str:
        """What the role named ``role`` is, for a person ("A manager approves card refunds")."""
        spec = self._roles.get(role)
        return spec.description if spec is not None else ""

    def role_separates_duties(self, role: str) -> bool:
        """Whether the role refuses the requester's own answer (``separation_of_duties``)."""
        spec = self._roles.get(role)
        return spec is not None and spec.separation_of_duties

    def role_reads_replies(self, role: str) -> bool:
        """Whether a thread reply can answer the role's questions (it has a reply interpreter)."""
        spec = self._roles.get(role)
        return spec is not None and spec.reply_interpreter is not None
