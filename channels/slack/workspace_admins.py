"""Who may change a workspace's settings (installed by OAuth): a workspace admin.

A workspace admin is whoever installed the app in it (a row of the installation store under
their user id: slack_sdk keeps one per installer), or a person Slack says is an admin or an
owner of the workspace (``users.info``: ``is_admin``, ``is_owner``; on Enterprise Grid an org
admin or owner is one of each workspace too). Asked on every change, never remembered: a person
who stops being an admin can no longer change anything. A failed look-up grants nothing,
whatever failed (Slack's error, a refused, dropped or timed-out connection): refused and
logged, never a listener's crash (issue 24).
"""

from __future__ import annotations

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from channels.slack.installations import DatabaseInstallationStore
from channels.slack.redaction import log
from channels.slack.tenant_tokens import speaking_for, workspace_of
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of

ADMIN_FLAGS = ("is_admin", "is_owner", "is_primary_owner")
"""What ``users.info`` says of an admin (an owner is one too)."""


class WorkspaceAdmins:
    """Answers "may this user change their workspace's settings?"."""

    def __init__(self, client: AsyncWebClient, installations: DatabaseInstallationStore) -> None:
        self._client = client
        self._installations = installations

    async def is_admin(self, tenant: str, user: str) -> bool:
        return await self.installed_by(tenant, user) or await self._slack_says(tenant, user)

    async def installed_by(self, tenant: str, user: str) -> bool:
        """Whether ``user`` installed the app in ``tenant``'s workspace (or its org's)."""
        enterprise, team = workspace_of(tenant)
        found = await self._installations.async_find_installation(
            enterprise_id=enterprise, team_id=team, user_id=user
        )
        if found is None and enterprise is not None:  # an org-wide install: its installer
            found = await self._installations.async_find_installation(
                enterprise_id=enterprise, team_id=None, user_id=user, is_enterprise_install=True
            )
        return found is not None

    async def _slack_says(self, tenant: str, user: str) -> bool:
        try:
            with speaking_for(tenant):
                response = await self._client.users_info(user=user)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning(
                "slack: whether user %s is an admin could not be read (%s): refused",
                user,
                failure_of(error),
            )
            return False
        person = response.get("user")
        return isinstance(person, dict) and any(person.get(flag) is True for flag in ADMIN_FLAGS)
