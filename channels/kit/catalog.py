"""A typed, read-only view of the application's assembly, as every channel reads it.

Which implementations are this channel's (a class made by the kit's factory carries its
configuration in its own ``__dict__``, under the channel's attribute), the role each
implements, the roles by name (description, separation of duties, whether a reply can answer
them), what a question about a tool is shown by (``Assembly.binding_of``) and the workflow a
conversation starts. Read from the App's assembly once; the assembly itself stays live, since
graphs attach after (``App.langgraph``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from bot.app import App
from bot.components.specs import ChannelRoleSpec, ChannelSpec
from bot.core.enums import PauseAnswerer
from bot.core.results import PauseView
from bot.core.routes import PauseRoute
from channels.kit.offers import Offered, offered


class RoleConfig(Protocol):
    """What every channel's configuration of a role implementation says: which role, who
    answers it, its approvers, and who may answer too once a question is escalated."""

    @property
    def role(self) -> str: ...
    @property
    def answered_by(self) -> PauseAnswerer: ...
    @property
    def approvers(self) -> tuple[str, ...]: ...
    @property
    def escalate_to(self) -> tuple[str, ...]: ...


C = TypeVar("C", bound=RoleConfig)


@dataclass(frozen=True, slots=True, kw_only=True)
class Implementation(Generic[C]):
    """One role implementation of a channel: its name (a pause's ``channel``) and config."""

    name: str
    config: C


def config_in(cls: type, attribute: str, kind: type[C]) -> C | None:
    """The configuration the factory put on ``cls`` (its own, never inherited)."""
    config = cls.__dict__.get(attribute)
    return config if isinstance(config, kind) else None


class KitCatalog(Generic[C]):
    """An index of one channel's role implementations and of the application's roles."""

    def __init__(self, app: App, config_of: Callable[[type], C | None]) -> None:
        assembly = app.assembly
        self._implementations: dict[str, Implementation[C]] = {}
        for cls, spec in assembly.channels.items():
            config = config_of(cls)
            if config is not None and isinstance(spec, ChannelSpec):
                self._implementations[spec.name] = Implementation(name=spec.name, config=config)
        self._assembly = assembly  # live: graphs attach after this (App.langgraph)
        self._roles: dict[str, ChannelRoleSpec] = {
            spec.name: spec for spec in assembly.roles.values()
        }
        application = assembly.application
        workflows = list(application.workflows)
        self.entry_workflow: type | None = application.entry_workflow or (
            workflows[0] if workflows else None
        )

    # ------------------------------------------------------------ implementations

    def implementation(self, name: str) -> Implementation[C] | None:
        """The implementation named ``name`` (a pause's ``channel``), if it is this channel's."""
        return self._implementations.get(name)

    def of_role(self, role: str) -> Implementation[C] | None:
        """This channel's implementation of the role named ``role`` (one per application)."""
        return next((i for i in self._implementations.values() if i.config.role == role), None)

    def answered_by_channel(self) -> Sequence[Implementation[C]]:
        """The implementations of CHANNEL roles: the ones with approvers."""
        return [
            i
            for i in self._implementations.values()
            if i.config.answered_by is PauseAnswerer.CHANNEL
        ]

    def owner_roles(self) -> Sequence[str]:
        """The THREAD_OWNER roles this channel asks: their owner answers."""
        return sorted(
            i.config.role
            for i in self._implementations.values()
            if i.config.answered_by is PauseAnswerer.THREAD_OWNER
        )

    # ------------------------------------------------------------ roles

    def role(self, name: str) -> ChannelRoleSpec | None:
        return self._roles.get(name)

    def role_description(self, role: str) -> str:
        """What the role named ``role`` is, for a person ("A manager approves card refunds")."""
        spec = self._roles.get(role)
        return spec.description if spec is not None else ""

    def role_separates_duties(self, role: str, route: PauseRoute | None = None) -> bool:
        """Whether a question of the role (routed by ``route``) refuses the requester's own
        answer (``separation_of_duties``, or several approvals required)."""
        spec = self._roles.get(role)
        separates = spec is not None and spec.separates_duties
        return separates or self.required_approvals(role, route) > 1

    def required_approvals(self, role: str, route: PauseRoute | None = None) -> int:
        """How many distinct approvers must approve a question of the role (1 by default): its
        policy's route's count where it set one (never fewer than the role's), else the
        role's."""
        if route is not None and route.required_approvals is not None:
            return route.required_approvals
        spec = self._roles.get(role)
        return 1 if spec is None else spec.required_approvals

    def role_reads_replies(self, role: str) -> bool:
        """Whether a free-text reply can answer the role's questions (a reply interpreter)."""
        spec = self._roles.get(role)
        return spec is not None and spec.reply_interpreter is not None

    # ------------------------------------------------------------ tools

    def tool_input(self, tool: str, *, agent: str, role: str) -> type[BaseModel] | None:
        """What a question about ``tool`` asked by ``agent`` under ``role`` is shown by: the
        tool's input, or an attached graph's role's model."""
        binding = self._assembly.binding_of(tool, agent=agent, role=role)
        return None if binding is None else binding.spec.input

    def tool_description(self, tool: str, *, agent: str, role: str) -> str:
        binding = self._assembly.binding_of(tool, agent=agent, role=role)
        return "" if binding is None else binding.spec.description

    def question_template(self, tool: str, *, agent: str, role: str) -> str | None:
        """The tool's ``question=`` template, else its role's; None when neither has one."""
        binding = self._assembly.binding_of(tool, agent=agent, role=role)
        template = None if binding is None else binding.spec.question
        if template is None:
            spec = self._roles.get(role)
            template = None if spec is None else spec.question
        return template

    # ------------------------------------------------------------ questions

    def offers(self, pause: PauseView) -> Offered:
        """The answers a waiting question offers (only those its asker takes)."""
        return offered(
            pause.ask,
            tool_input=pause.tool_input,
            reads_replies=self.role_reads_replies(pause.role),
        )
