"""What waits for one Slack user: ``/pending`` and the App Home show the same list.

A user may answer the pauses of CHANNEL roles whose Slack channel (as their workspace set it:
``channels.slack.workspaces``) names them as an approver
(directly or through a user group), once escalated those whose ``escalate_to`` names them, and
the THREAD_OWNER pauses of threads they own; never, where its role separates duties, a question
they asked for themselves (``channels.kit.waiting``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.app import App
from bot.core.results import PendingPause
from channels.kit.answerers import Among
from channels.kit.waiting import HandedOn, waiting_for
from channels.slack.approvers import ApproverDirectory
from channels.slack.button_values import shown_round_of
from channels.slack.catalog import Catalog
from channels.slack.render import mention, slack_date
from channels.slack.render_pending import PendingItemView
from channels.slack.workspaces import WorkspaceConfigs


class PendingLists:
    def __init__(
        self,
        *,
        app: App,
        catalog: Catalog,
        directory: ApproverDirectory,
        workspaces: WorkspaceConfigs | None = None,
    ) -> None:
        self._app = app
        self._catalog = catalog
        self._directory = directory
        self._workspaces = workspaces or WorkspaceConfigs(catalog)

    async def for_user(self, *, tenant_id: str, user: str) -> list[PendingItemView]:
        """The pauses ``user`` may answer (``channels.kit.waiting``): what expires first at
        the top, then newest first."""

        async def among(approvers: Sequence[str]) -> bool:
            return await self._directory.may_answer(user, approvers)

        def among_for(other: str) -> Among:  # a delegator's, for their delegates
            async def theirs(approvers: Sequence[str]) -> bool:
                return await self._directory.may_answer(other, approvers)

            return theirs

        waiting = await waiting_for(
            self._app,
            self._catalog,
            tenant_id=tenant_id,
            person=user,
            among=among,
            among_for=among_for,
            implementations=await self._workspaces.answered_by_channel(tenant_id),
        )
        now = self._app.clock.now()
        return [self._item(w.pending, now, handed=w.handed) for w in waiting]

    def _item(
        self, pending: PendingPause, now: datetime, *, handed: HandedOn | None = None
    ) -> PendingItemView:
        assert pending.pause_id is not None
        expires = None if pending.expires_at is None else datetime.fromisoformat(pending.expires_at)
        return PendingItemView(
            pause_id=pending.pause_id,
            tool=pending.ask.tool,
            agent=pending.agent,
            arguments=pending.proposed_arguments,  # what an approval approves now
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
            question=self._catalog.question_template(
                pending.ask.tool, agent=pending.agent, role=pending.role
            ),
            delivered=pending.delivered,
            shown_round=shown_round_of(pending),
            handed=None if handed is None else handed.said(mention, slack_date),
        )
