"""The standing grants a Slack user sees on their App Home and may revoke (``channels.kit.
grants``): those they gave, and those of the roles they approve (Slack's own rule: approvers
and user groups)."""

from __future__ import annotations

from bot.app import App
from bot.core.enums import PauseAnswerer
from bot.core.grants import Grant
from channels.kit.grants import now_active
from channels.slack.approvers import ApproverDirectory
from channels.slack.catalog import Catalog


class SlackGrants:
    """The grants a Slack user sees on their Home, and may revoke: those they gave, and those
    of the roles they approve."""

    def __init__(self, *, app: App, catalog: Catalog, directory: ApproverDirectory) -> None:
        self._app = app
        self._catalog = catalog
        self._directory = directory

    async def for_user(self, *, tenant_id: str, user: str) -> list[Grant]:
        grants = await self._app.list_grants(tenant_id=tenant_id)
        active = now_active(grants, self._app.clock.now())
        return [g for g in active if await self.may_revoke(g, user)]

    async def may_revoke(self, grant: Grant, user: str) -> bool:
        if grant.granted_by == user:
            return True
        implementation = self._catalog.slack_channel_of_role(grant.role)
        if implementation is None:
            return False
        config = implementation.config
        if config.answered_by is PauseAnswerer.THREAD_OWNER:
            return False  # only its owner grants there, for their own requests
        return await self._directory.may_answer(user, config.approvers)
