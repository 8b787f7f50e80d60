"""What waits for one Slack user: ``/pending`` and the App Home show the same list.

A user may answer the pauses of CHANNEL roles whose Slack channel names them as an approver
(directly or through a user group), and the THREAD_OWNER pauses of threads they own.
"""

from __future__ import annotations

from typing import Final

from bot.app import App
from bot.core.enums import PauseAnswerer
from bot.core.results import PendingPause
from channels.slack.approvers import ApproverDirectory
from channels.slack.catalog import Catalog
from channels.slack.render_pending import PendingItemView

MAX_LISTED: Final = 500


class PendingLists:
    def __init__(self, *, app: App, catalog: Catalog, directory: ApproverDirectory) -> None:
        self._app = app
        self._catalog = catalog
        self._directory = directory

    async def for_user(self, *, tenant_id: str, user: str) -> list[PendingItemView]:
        """The pauses ``user`` may answer, newest first."""
        roles = [
            impl.config.role
            for impl in self._catalog.answered_by_channel()
            if await self._directory.may_answer(user, impl.config.approvers)
        ]
        pending: list[PendingPause] = []
        if roles:
            pending += await self._app.list_pending(
                tenant_id=tenant_id,
                answered_by=PauseAnswerer.CHANNEL,
                roles=sorted(set(roles)),
                include_channel_pause_ids=True,
                limit=MAX_LISTED,
            )
        pending += await self._app.list_pending(
            tenant_id=tenant_id,
            answered_by=PauseAnswerer.THREAD_OWNER,
            owner_id=user,
            limit=MAX_LISTED,
        )
        items = [self._item(p) for p in pending if p.pause_id is not None]
        return sorted(items, key=lambda item: item.asked_at, reverse=True)

    def _item(self, pending: PendingPause) -> PendingItemView:
        assert pending.pause_id is not None
        return PendingItemView(
            pause_id=pending.pause_id,
            tool=pending.ask.tool,
            agent=pending.agent,
            arguments=pending.ask.arguments,
            input_model=self._catalog.tool_input(pending.ask.tool),
            owner_id=pending.owner_id or "",
            asked_at=pending.asked_at,
            role=pending.channel,
            tool_description=self._catalog.tool_description(pending.ask.tool),
            role_description=self._catalog.role_description(pending.channel),  # the role's name
            allowed_decisions=pending.ask.allowed_decisions,
        )
