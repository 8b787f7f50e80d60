"""What waits for one Slack user: ``/pending`` and the App Home show the same list.

A user may answer the pauses of CHANNEL roles whose Slack channel names them as an approver
(directly or through a user group), once escalated those whose ``escalate_to`` names them, and
the THREAD_OWNER pauses of threads they own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from bot.app import App
from bot.core.enums import PauseAnswerer
from bot.core.results import PendingPause
from channels.slack.approvers import ApproverDirectory
from channels.slack.catalog import Catalog
from channels.slack.render_pending import PendingItemView, listed_order

MAX_LISTED: Final = 500


class PendingLists:
    def __init__(self, *, app: App, catalog: Catalog, directory: ApproverDirectory) -> None:
        self._app = app
        self._catalog = catalog
        self._directory = directory

    async def for_user(self, *, tenant_id: str, user: str) -> list[PendingItemView]:
        """The pauses ``user`` may answer: what expires first at the top, then newest first."""
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
        pending += await self._escalated_to(tenant_id, user, exclude=set(roles))
        pending += await self._app.list_pending(
            tenant_id=tenant_id,
            answered_by=PauseAnswerer.THREAD_OWNER,
            owner_id=user,
            limit=MAX_LISTED,
        )
        now = self._app.clock.now()
        return listed_order([self._item(p, now) for p in pending if p.pause_id is not None])

    async def _escalated_to(
        self, tenant_id: str, user: str, *, exclude: set[str]
    ) -> list[PendingPause]:
        """The escalated pauses of the roles whose ``escalate_to`` names ``user`` (and whose
        approvers do not: those are listed already)."""
        roles = {
            impl.config.role
            for impl in self._catalog.answered_by_channel()
            if impl.config.role not in exclude
            and await self._directory.may_answer(user, impl.config.escalate_to)
        }
        if not roles:
            return []
        waiting = await self._app.list_pending(
            tenant_id=tenant_id,
            answered_by=PauseAnswerer.CHANNEL,
            roles=sorted(roles),
            include_channel_pause_ids=True,
            limit=MAX_LISTED,
        )
        return [p for p in waiting if p.escalated]

    def _item(self, pending: PendingPause, now: datetime) -> PendingItemView:
        assert pending.pause_id is not None
        expires = None if pending.expires_at is None else datetime.fromisoformat(pending.expires_at)
        return PendingItemView(
            pause_id=pending.pause_id,
            tool=pending.ask.tool,
            agent=pending.agent,
            arguments=pending.ask.arguments,
            input_model=self._catalog.tool_input(
                pending.ask.tool, agent=pending.agent, role=pending.channel
            ),
            owner_id=pending.owner_id or "",
            asked_at=pending.asked_at,
            role=pending.channel,
            tool_description=self._catalog.tool_description(
                pending.ask.tool, agent=pending.agent, role=pending.channel
            ),
            role_description=self._catalog.role_description(pending.channel),  # the role's name
            expires_at=pending.expires_at,
            time_left=None if expires is None else expires - now,
            allowed_decisions=pending.ask.allowed_decisions,
        )
