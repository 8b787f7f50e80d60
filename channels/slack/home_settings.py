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
from dataclasses import dataclass
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
    ESCALATION_CONVERSATION_BLOCK,
    ESCALATION_GROUPS_BLOCK,
    ESCALATION_USERS_BLOCK,
    GROUPS_BLOCK,
    REFUSED,
    USERS_BLOCK,
    VALUE_ACTION,
    SettingRow,
    settings_blocks,
    settings_modal,
    told_modal,
)
from channels.slack.webapi import TRANSPORT_ERRORS, api_error, failure_of
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
        implementations = self._implementations()
        if not implementations:  # every role answered by its requester: nothing to set
            return []
        set_by = await self._workspaces.set_by(tenant_id)
        rows = [_row(i, set_by.get(i.name), self._catalog) for i in implementations]
        return settings_blocks(rows, admin=await self._admins.is_admin(tenant_id, user))

    async def open_form(
        self, *, tenant_id: str, user: str, implementation: str, trigger_id: str
    ) -> None:
        """The "Change" button: the form for an admin, a refusal for anybody else."""
        row = await self._row_of(tenant_id, implementation)
        admin = await self._admins.is_admin(tenant_id, user)
        if not admin:
            log.info("slack: user %s may not change the settings of their workspace", user)
            view = told_modal(REFUSED)
        else:
            view = told_modal(GONE) if row is None else settings_modal(row)
        try:
            await self._client.views_open(trigger_id=trigger_id, view=view)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: the settings form was not opened: %s", failure_of(error))

    async def save(
        self, *, tenant_id: str, user: str, implementation: str, values: StateValues
    ) -> dict[str, str]:
        """The form submitted: saved, or what is wrong, by block (nothing saved)."""
        if not await self._admins.is_admin(tenant_id, user):
            log.info("slack: user %s may not change the settings of their workspace", user)
            return {CONVERSATION_BLOCK: REFUSED}
        if self._implementation(implementation) is None:
            return {CONVERSATION_BLOCK: GONE}
        form = _read_form(values)
        if isinstance(form, dict):
            return form
        row = await self._row_of(tenant_id, implementation)
        problems = {} if row is None else await self._new_conversations(form, row, user)
        if problems:
            return problems
        setting = WorkspaceSetting(
            tenant_id=tenant_id,
            implementation=implementation,
            conversation=form.conversation,
            approvers=form.approvers,
            escalate_to=form.escalate_to or None,  # none named: the code's
            escalation_conversation=form.escalation_conversation,
            updated_by=user,
            updated_at=self._clock.now(),
        )
        assert self._workspaces.settings is not None  # a section only installed by OAuth
        await self._workspaces.settings.save(setting)
        log.info("slack: user %s changed the settings of %s", user, implementation)
        return {}

    async def _new_conversations(self, form: _Form, row: SettingRow, user: str) -> dict[str, str]:
        """Tell a conversation new to the role that its questions are asked there now; what is
        wrong, by block, when the bot cannot post there."""
        known = (row.conversation, row.escalation_conversation)
        for block, where, what in (
            (CONVERSATION_BLOCK, form.conversation, "questions"),
            (ESCALATION_CONVERSATION_BLOCK, form.escalation_conversation, "escalated questions"),
        ):
            if where is not None and where not in known:
                said = f"{escape(row.role, 150)}: the {what} of this workspace are asked here "
                problem = await self._say_here(where, f"{said}now (set by <@{user}>).")
                if problem is not None:
                    return {block: problem}
        return {}

    async def _say_here(self, conversation: str, text: str) -> str | None:
        """Say ``text`` in ``conversation``: the bot can post there (else what is wrong, for the
        form: a channel it was not invited to would lose every question asked there)."""
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
        """The "Use the defaults" button: whether it was done (an admin's click)."""
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
    default = implementation.config
    config = overridden(default, setting)
    return SettingRow(
        implementation=implementation.name,
        role=catalog.role_description(config.role) or config.role,
        conversation=config.conversation,
        approvers=config.approvers,
        conversation_set=config.conversation != implementation.config.conversation,
        approvers_set=config.approvers != implementation.config.approvers,
        escalates=bool(default.escalate_to or default.escalation_conversation),
        escalate_to=config.escalate_to,
        escalation_conversation=config.escalation_conversation,
        escalation_set=(config.escalate_to, config.escalation_conversation)
        != (default.escalate_to, default.escalation_conversation),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Form:
    """The settings form as submitted, its ids checked."""

    conversation: str
    approvers: tuple[str, ...]
    escalate_to: tuple[str, ...]
    escalation_conversation: str | None


def _read_form(values: StateValues) -> _Form | dict[str, str]:
    """The form read, or what is wrong, by block."""
    conversation = _text(values, CONVERSATION_BLOCK, "selected_conversation")
    if conversation is None or not is_conversation_id(conversation):
        return {CONVERSATION_BLOCK: NO_CONVERSATION}
    approvers = _people(values, USERS_BLOCK, GROUPS_BLOCK)
    if isinstance(approvers, dict):
        return approvers
    if not approvers:
        return {USERS_BLOCK: NO_APPROVER}
    escalate_to = _people(values, ESCALATION_USERS_BLOCK, ESCALATION_GROUPS_BLOCK)
    if isinstance(escalate_to, dict):
        return escalate_to
    again = _text(values, ESCALATION_CONVERSATION_BLOCK, "selected_conversation")
    if again is not None and not is_conversation_id(again):
        return {ESCALATION_CONVERSATION_BLOCK: NO_CONVERSATION}
    return _Form(
        conversation=conversation,
        approvers=approvers,
        escalate_to=escalate_to,
        escalation_conversation=again,
    )


def _people(
    values: StateValues, users_block: str, groups_block: str
) -> tuple[str, ...] | dict[str, str]:
    """The users picked and the user-group ids typed (in that order, once each), or what is
    wrong with the ids typed."""
    users = [u for u in _list(values, users_block, "selected_users") if USER_ID.fullmatch(u)]
    groups = [g for g in _SEPARATORS.split(_text(values, groups_block, "value") or "") if g]
    wrong = [g for g in groups if not GROUP_ID.fullmatch(g)]
    if wrong:
        return {groups_block: NOT_GROUPS.format(wrong=", ".join(wrong)[:100])}
    return tuple(dict.fromkeys([*users, *groups]))


def _text(values: StateValues, block: str, key: str) -> str | None:
    found = values.get(block, {}).get(VALUE_ACTION, {}).get(key)
    return found.strip() or None if isinstance(found, str) else None


def _list(values: StateValues, block: str, key: str) -> list[str]:
    found = values.get(block, {}).get(VALUE_ACTION, {}).get(key)
    return [v for v in found if isinstance(v, str)] if isinstance(found, list) else []
