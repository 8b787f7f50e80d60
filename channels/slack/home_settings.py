"""Per-workspace settings from the App Home (installed by OAuth): a workspace admin sets where
each role's questions are asked and who answers them; the code's (``.env``) are the defaults.

The Home shows, below the list, each CHANNEL role's conversation and approvers as the workspace
has them (``HomeSection``); an admin (``WorkspaceAdmins``) gets "Change" (a modal) and "Use the
defaults". Whether the person is an admin is asked again when the modal opens, when it is
submitted and on a reset: a button shown to an admin and clicked after, or a forged submission,
changes nothing. The workspace is always the request's own (its tenant), never the form's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.clock import Clock
from bot.store.workspace_settings import WorkspaceSetting
from channels.slack.approvers import GROUP_ID, USER_ID
from channels.slack.catalog import Catalog, SlackImplementation
from channels.slack.conversation_ids import is_conversation_id
from channels.slack.redaction import log
from channels.slack.render import escape
from channels.slack.render_settings import (
    CONVERSATION_BLOCK,
    GROUPS_BLOCK,
    REFUSED,
    USERS_BLOCK,
    VALUE_ACTION,
    SettingRow,
    refused_modal,
    settings_blocks,
    settings_modal,
)
from channels.slack.webapi import TRANSPORT_ERRORS, api_error
from channels.slack.workspace_admins import WorkspaceAdmins
from channels.slack.workspaces import WorkspaceConfigs, overridden

StateValues = Mapping[str, Mapping[str, Mapping[str, object]]]

NO_CONVERSATION: Final = "Choose the channel its questions are asked in."
NO_APPROVER: Final = "Name at least one person or user group: somebody must answer its questions."
NOT_GROUPS: Final = "User group ids start with S (S0FINANCE), separated by commas; not: {wrong}"
GONE: Final = "This role is no longer in the application; close this form."
NOT_A_MEMBER: Final = (
    "The app cannot post in that channel: invite it there first (/invite), then save again."
)
NOT_POSTED: Final = "Slack did not take a message in that channel; try again"
MEMBERSHIP_ERRORS: Final = frozenset(
    {"not_in_channel", "channel_not_found", "is_archived", "restricted_action"}
)
_SEPARATORS: Final = re.compile(r"[\s,]+")


class HomeSettings:
    """The Home's settings section, and what its buttons and form do."""

    def __init__(
        self,
        *,
        client: AsyncWebClient,
        clock: Clock,
        catalog: Catalog,
        workspaces: WorkspaceConfigs,
        admins: WorkspaceAdmins,
    ) -> None:
        self._client = client
        self._clock = clock
        self._catalog = catalog
        self._workspaces = workspaces
        self._admins = admins

    async def blocks(self, *, tenant_id: str, user: str) -> list[dict[str, object]]:
        """The section of ``user``'s Home in ``tenant_id``'s workspace."""
        set_by = await self._workspaces.set_by(tenant_id)
        rows = [_row(i, set_by.get(i.name), self._catalog) for i in self._implementations()]
        return settings_blocks(rows, admin=await self._admins.is_admin(tenant_id, user))

    async def open_form(
        self, *, tenant_id: str, user: str, implementation: str, trigger_id: str
    ) -> None:
        """ "Change": the form for an admin, a refusal for anybody else."""
        row = await self._row_of(tenant_id, implementation)
        admin = await self._admins.is_admin(tenant_id, user)
        view = settings_modal(row) if admin and row is not None else refused_modal()
        if not admin:
            log.info("slack: user %s may not change the settings of their workspace", user)
        try:
            await self._client.views_open(trigger_id=trigger_id, view=view)
        except SlackApiError as error:
            log.warning("slack: the settings form was not opened: %s", api_error(error))

    async def save(
        self, *, tenant_id: str, user: str, implementation: str, values: StateValues
    ) -> dict[str, str]:
        """The form submitted: saved, or what is wrong, by block (nothing saved)."""
        if not await self._admins.is_admin(tenant_id, user):
            log.info("slack: user %s may not change the settings of their workspace", user)
            return {CONVERSATION_BLOCK: REFUSED}
        if self._implementation(implementation) is None:
            return {CONVERSATION_BLOCK: GONE}
        conversation = _text(values, CONVERSATION_BLOCK, "selected_conversation")
        users = [u for u in _list(values, USERS_BLOCK, "selected_users") if USER_ID.fullmatch(u)]
        groups = [g for g in _SEPARATORS.split(_text(values, GROUPS_BLOCK, "value") or "") if g]
        wrong = [g for g in groups if not GROUP_ID.fullmatch(g)]
        if conversation is None or not is_conversation_id(conversation):
            return {CONVERSATION_BLOCK: NO_CONVERSATION}
        if wrong:
            return {GROUPS_BLOCK: NOT_GROUPS.format(wrong=", ".join(wrong)[:100])}
        if not users and not groups:
            return {USERS_BLOCK: NO_APPROVER}
        row = await self._row_of(tenant_id, implementation)
        if row is not None and conversation != row.conversation:
            problem = await self._say_here(conversation, row.role, user)
            if problem is not None:
                return {CONVERSATION_BLOCK: problem}
        setting = WorkspaceSetting(
            tenant_id=tenant_id,
            implementation=implementation,
            conversation=conversation,
            approvers=tuple(dict.fromkeys([*users, *groups])),
            updated_by=user,
            updated_at=self._clock.now(),
        )
        assert self._workspaces.settings is not None  # a section only installed by OAuth
        await self._workspaces.settings.save(setting)
        log.info("slack: user %s changed the settings of %s", user, implementation)
        return {}

    async def _say_here(self, conversation: str, role: str, user: str) -> str | None:
        """Say in ``conversation`` that the role's questions are asked there now: the bot can
        post there (else what is wrong, for the form: a channel it was not invited to would
        lose every question of the workspace)."""
        text = f"{escape(role, 150)}: the questions of this workspace are asked here now " + (
            f"(set by <@{user}>)."
        )
        try:
            await self._client.chat_postMessage(channel=conversation, text=text)
        except SlackApiError as error:
            code = api_error(error)
            log.info("slack: the settings' conversation refused a message: %s", code)
            return NOT_A_MEMBER if code in MEMBERSHIP_ERRORS else f"{NOT_POSTED} ({code})"
        except TRANSPORT_ERRORS:
            return NOT_POSTED
        return None

    async def reset(self, *, tenant_id: str, user: str, implementation: str) -> bool:
        """ "Use the defaults": whether it was done (an admin's click)."""
        if not await self._admins.is_admin(tenant_id, user):
            log.info("slack: user %s may not change the settings of their workspace", user)
            return False
        assert self._workspaces.settings is not None
        return await self._workspaces.settings.clear(tenant_id, implementation)

    def _implementations(self) -> list[SlackImplementation]:
        return list(self._catalog.answered_by_channel())

    def _implementation(self, name: str) -> SlackImplementation | None:
        return next((i for i in self._implementations() if i.name == name), None)

    async def _row_of(self, tenant_id: str, name: str) -> SettingRow | None:
        found = self._implementation(name)
        if found is None:
            return None
        return _row(found, (await self._workspaces.set_by(tenant_id)).get(name), self._catalog)


def _row(
    implementation: SlackImplementation, setting: WorkspaceSetting | None, catalog: Catalog
) -> SettingRow:
    config = overridden(implementation.config, setting)
    return SettingRow(
        implementation=implementation.name,
        role=catalog.role_description(config.role) or config.role,
        conversation=config.conversation,
        approvers=config.approvers,
        conversation_set=config.conversation != implementation.config.conversation,
        approvers_set=config.approvers != implementation.config.approvers,
    )


def _text(values: StateValues, block: str, key: str) -> str | None:
    found = values.get(block, {}).get(VALUE_ACTION, {}).get(key)
    return found.strip() or None if isinstance(found, str) else None


def _list(values: StateValues, block: str, key: str) -> list[str]:
    found = values.get(block, {}).get(VALUE_ACTION, {}).get(key)
    return [v for v in found if isinstance(v, str)] if isinstance(found, list) else []
