"""What waits for one person on the web: the inbox's list, read from the App.

A person may answer the pauses of CHANNEL roles whose web channel names them as an approver,
once escalated those whose ``escalate_to`` names them, and the THREAD_OWNER pauses of threads
they own. What expires first is at the top, then the newest.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from bot.app import App
from bot.core.enums import PauseAnswerer
from bot.core.results import PendingPause
from bot.core.time_left import expiring_first
from channels.web.catalog import WebCatalog
from channels.web.channel import WebOutbox
from channels.web.links import Link
from channels.web.render_inbox import InboxEntry
from channels.web.times import Waiting

MAX_LISTED: Final = 500


class WebInbox:
    def __init__(self, app: App, catalog: WebCatalog, outbox: WebOutbox) -> None:
        self._app = app
        self._catalog = catalog
        self._outbox = outbox

    async def entries(self, session: Link) -> list[InboxEntry]:
        """The inbox of the signed-in person, in the order shown."""
        mine, escalated = await self._pending(session)
        now = self._app.clock.now()
        shown = [(p, False) for p in mine] + [(p, True) for p in escalated]
        ordered = sorted(shown, key=lambda item: _order(item[0]))
        return [self._entry(p, session, now, escalated=e) for p, e in ordered if p.pause_id]

    async def _pending(self, session: Link) -> tuple[list[PendingPause], list[PendingPause]]:
        """(what waits for them as approver or owner, what was escalated to them)."""
        tenant, person = session.tenant_id, session.approver
        mine = await self._channel_pauses(tenant, self._catalog.roles_answered_by(person))
        owner_roles = self._catalog.owner_roles()
        if owner_roles:
            mine += await self._app.list_pending(
                tenant_id=tenant,
                answered_by=PauseAnswerer.THREAD_OWNER,
                owner_id=person,
                roles=owner_roles,
                limit=MAX_LISTED,
            )
        others = await self._channel_pauses(tenant, self._catalog.roles_escalated_to(person))
        return mine, [p for p in others if p.escalated]

    async def _channel_pauses(self, tenant_id: str, roles: Sequence[str]) -> list[PendingPause]:
        if not roles:
            return []
        return await self._app.list_pending(
            tenant_id=tenant_id,
            answered_by=PauseAnswerer.CHANNEL,
            roles=roles,
            include_channel_pause_ids=True,
            limit=MAX_LISTED,
        )

    def _entry(
        self, pending: PendingPause, session: Link, now: datetime, *, escalated: bool
    ) -> InboxEntry:
        assert pending.pause_id is not None
        waiting = Waiting.of(
            pending.expires_at, now=now, reminded=pending.reminded, escalated=pending.escalated
        )
        return InboxEntry(
            url=self._outbox.question_url(
                pending.pause_id, approver=session.approver, tenant_id=session.tenant_id
            ),
            tool=pending.ask.tool,
            tool_description=self._outbox.tool_description(
                pending.ask.tool, agent=pending.agent, role=pending.channel
            ),
            arguments=pending.ask.arguments,  # masked by list_pending
            asked_at=pending.asked_at[:16].replace("T", " "),
            time_left=waiting.left_text(),
            reminded=waiting.reminded_text(),
            escalated=escalated,
        )


def _order(pending: PendingPause) -> tuple[int, float]:
    """What expires first at the top (soonest first), then the rest newest first."""
    return expiring_first(pending.expires_at, pending.asked_at)
