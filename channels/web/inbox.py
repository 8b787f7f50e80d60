"""What waits for one person on the web: the inbox's list, read from the App.

A person may answer the pauses of CHANNEL roles whose web channel names them as an approver,
once escalated those whose ``escalate_to`` names them, and the THREAD_OWNER pauses of threads
they own; never, where its role separates duties, a question they asked for themselves
(``channels.kit.waiting``). What expires first is at the top, then the newest.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from bot.app import App
from bot.core.results import PendingPause
from channels.kit.answerers import Among
from channels.kit.batches import may_batch
from channels.kit.question import ending_of, question_view, when
from channels.kit.waiting import waiting_for
from channels.web.catalog import WebCatalog
from channels.web.channel import QUESTION_PATH, WebOutbox
from channels.web.links import Link
from channels.web.render_batches import pick_value
from channels.web.render_inbox import InboxEntry

MAX_DECIDED: Final = 20


class WebInbox:
    def __init__(self, app: App, catalog: WebCatalog, outbox: WebOutbox) -> None:
        self._app = app
        self._catalog = catalog
        self._outbox = outbox

    async def entries(self, session: Link) -> list[InboxEntry]:
        """The inbox of the signed-in person, in the order shown (``channels.kit.waiting``)."""
        person = session.approver

        async def among(people: Sequence[str]) -> bool:
            return person in people

        def among_for(other: str) -> Among:  # a delegator's, for their delegates
            async def theirs(people: Sequence[str]) -> bool:
                return other in people

            return theirs

        waiting = await waiting_for(
            self._app,
            self._catalog,
            tenant_id=session.tenant_id,
            person=person,
            among=among,
            among_for=among_for,
            owner_roles=self._catalog.owner_roles(),
        )
        now = self._app.clock.now()
        return [
            self._entry(
                w.pending,
                session,
                now,
                escalated=w.escalated_to_them,
                handed="" if w.handed is None else w.handed.said(str, when),
            )
            for w in waiting
        ]

    async def decided(self, session: Link) -> list[InboxEntry]:
        """What the signed-in person answered, latest first: how, what ran, what the tool
        returned (``App.list_answered``)."""
        answered = await self._app.list_answered(
            tenant_id=session.tenant_id, responder=session.approver, limit=MAX_DECIDED
        )
        now = self._app.clock.now()
        return [
            InboxEntry(
                url=self._outbox.question_url(
                    p.pause_id, approver=session.approver, tenant_id=session.tenant_id
                ),
                question=question_view(p, self._catalog, now=now),  # masked by the view
                ending=ending_of(None, tool_result=p.tool_result),
            )
            for p in answered
        ]

    def _entry(
        self,
        pending: PendingPause,
        session: Link,
        now: datetime,
        *,
        escalated: bool,
        handed: str = "",
    ) -> InboxEntry:
        assert pending.pause_id is not None
        url = self._outbox.question_url(
            pending.pause_id, approver=session.approver, tenant_id=session.tenant_id
        )
        question = question_view(pending, self._catalog, now=now)  # masked by list_pending
        return InboxEntry(
            url=url,
            question=question,
            escalated=escalated,
            handed=handed,
            delivered=pending.delivered,
            pick=pick_value(url.rsplit(QUESTION_PATH, 1)[1], pending)
            if may_batch(question)
            else "",
        )
