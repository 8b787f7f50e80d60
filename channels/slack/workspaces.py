"""The Slack channels as one workspace sees them: the code's configuration (``slack_channel``,
from ``.env``), with what the workspace's admin set over it (installed by OAuth).

``slack_channel(conversation=, approvers=)`` fixes where a role's questions are asked and who
answers them when the class is made. Installed in several workspaces, each one's admin may set
its own (``cs_workspace_settings``, from App Home): every place that decides where to ask or who
may answer reads the implementation through :class:`WorkspaceConfigs` with the pause's tenant —
the question posted, reminded and escalated (``SlackChannel``), who may answer a click, a modal
or a thread reply (``Authorizer``), ``/pending`` and App Home (``PendingLists``, ``HomeTabs``).
One workspace's settings never reach another's questions: they are read by its tenant.

With one workspace (a bot token in ``.env``) nothing is read: the code's configuration is used
as it is, exactly as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.core.enums import PauseAnswerer
from bot.store.workspace_settings import SqlWorkspaceSettings, WorkspaceSetting
from channels.slack.catalog import Catalog, SlackChannelConfig, SlackImplementation


def overridden(config: SlackChannelConfig, setting: WorkspaceSetting | None) -> SlackChannelConfig:
    """``config`` with what ``setting`` sets: its conversation, and for a CHANNEL role its
    approvers (a THREAD_OWNER role is answered by its owner, whoever is named) and, when it
    escalates at all (the code names an escalation), who else answers and where."""
    if setting is None:
        return config
    channel = config.answered_by is PauseAnswerer.CHANNEL
    escalates = channel and bool(config.escalate_to or config.escalation_conversation)
    changed = replace(
        config,
        conversation=setting.conversation or config.conversation,
        approvers=(channel and setting.approvers) or config.approvers,
        escalate_to=(escalates and setting.escalate_to) or config.escalate_to,
        escalation_conversation=(escalates and setting.escalation_conversation)
        or config.escalation_conversation,
    )
    return config if changed == config else changed


class WorkspaceConfigs:
    """The application's Slack implementations for a tenant's workspace. ``settings`` is
    ``None`` with one workspace: the code's configuration, nothing read."""

    def __init__(self, catalog: Catalog, settings: SqlWorkspaceSettings | None = None) -> None:
        self._catalog = catalog
        self.settings = settings
        self._known: dict[str, dict[str, WorkspaceSetting]] = {}

    async def set_by(self, tenant: str | None) -> dict[str, WorkspaceSetting]:
        """What ``tenant``'s workspace set, by implementation (one read; none with one
        workspace)."""
        if self.settings is None or tenant is None:
            return {}
        found = await self.settings.of_tenant(tenant)
        self._known[tenant] = found
        return found

    async def config(
        self, tenant: str | None, implementation: str, default: SlackChannelConfig
    ) -> SlackChannelConfig:
        """``default`` (the implementation's own) as ``tenant``'s workspace set it."""
        if self.settings is None:
            return default
        return overridden(default, (await self.set_by(tenant)).get(implementation))

    async def implementation(self, tenant: str | None, name: str) -> SlackImplementation | None:
        """The implementation named ``name`` (a pause's ``channel``), as ``tenant`` set it."""
        found = self._catalog.slack_channel(name)
        if found is None or self.settings is None:
            return found
        return replace(found, config=await self.config(tenant, name, found.config))

    async def of_role(self, tenant: str | None, role: str) -> SlackImplementation | None:
        found = self._catalog.slack_channel_of_role(role)
        return None if found is None else await self.implementation(tenant, found.name)

    async def answered_by_channel(self, tenant: str | None) -> Sequence[SlackImplementation]:
        """The implementations of CHANNEL roles, as ``tenant`` set them (one read)."""
        every = self._catalog.answered_by_channel()
        if self.settings is None:
            return every
        set_by = await self.set_by(tenant)
        return [replace(i, config=overridden(i.config, set_by.get(i.name))) for i in every]

    def last_known(
        self, tenant: str | None, implementation: SlackImplementation
    ) -> SlackChannelConfig:
        """``implementation`` as ``tenant`` set it when last read here, without a read (for
        what cannot wait: the assistant thread's status, said as a question is asked, just
        after its read)."""
        setting = self._known.get(tenant or "", {}).get(implementation.name)
        return overridden(implementation.config, setting)
