"""Standing delegations on the web inbox: the person's own (with an End now form) and those to
them, a form to start one, both posted to ``/inbox/delegations`` with the inbox's CSRF; and the
delegate told (``NoticeKind.DELEGATION``, through the notifier) when one to them starts or is
ended early through the App (``App.on_delegation``: from this inbox, Slack's Home, any caller).

The delegator is always the signed-in person, never a field of the form; only a delegation's
delegator may end it (an end posted by anyone else with its id: 403, nothing changed). A new
one names a person the web channels know (an approver, or an escalation's), never the person
themself, and ends after now; a bad one is refused with what is wrong (400), nothing made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Final

from bot.app import App
from bot.core.delegations import Delegation, DelegationChange
from bot.core.errors import CountersignError
from channels.kit.delegations import (
    DELEGATE_FIELD,
    UNTIL_FIELD,
    delegated_roles,
    delegation_lines,
    ending_refused,
    new_delegation_problems,
    roles_said,
)
from channels.kit.question import when
from channels.kit.texts import (
    DELEGATION_END_UNREADABLE,
    DELEGATION_ENDED,
    DELEGATION_GONE,
    DELEGATION_NOT_YOURS,
    delegation_ended,
    delegation_made,
    delegation_started,
)
from channels.web.catalog import WebCatalog
from channels.web.channel import WebOutbox
from channels.web.links import Link
from channels.web.notify import NoticeKind, Notifier, WebNotice, log, notify_each
from channels.web.render_delegations import ID_FIELD, section

DELEGATIONS_PATH: Final = "/inbox/delegations"
"""Where the inbox's delegation forms post (``action``: end or start)."""
ACTION_FIELD: Final = "action"
MAX_FIELD: Final = 255


class WebDelegations:
    """The inbox's delegations, what its forms do, and the delegate's notice."""

    def __init__(
        self, app: App, catalog: WebCatalog, outbox: WebOutbox, notifier: Notifier
    ) -> None:
        self._app = app
        self._catalog = catalog
        self._outbox = outbox
        self._notifier = notifier
        app.on_delegation(self.tell_delegate)

    async def section(self, session: Link, *, csrf: str, csrf_field: str, notice: str) -> str:
        """The inbox's section for the signed-in person."""
        delegations = await self._app.list_delegations(tenant_id=session.tenant_id)
        lines = delegation_lines(delegations, session.approver, self._app.clock.now())
        return section(
            lines, path=DELEGATIONS_PATH, csrf=csrf, csrf_field=csrf_field, notice=notice
        )

    async def post(self, session: Link, fields: Mapping[str, str]) -> tuple[int, str]:
        """A posted form of the section: the status and what the inbox then says."""
        match fields.get(ACTION_FIELD):
            case "end":
                return await self._end(session, fields.get(ID_FIELD, ""))
            case "start":
                return await self._start(session, fields)
            case _:
                return 400, "Not understood: open the inbox again and send the form from there."

    async def _end(self, session: Link, delegation_id: str) -> tuple[int, str]:
        delegations = await self._app.list_delegations(tenant_id=session.tenant_id)
        found = next((d for d in delegations if d.delegation_id == delegation_id), None)
        if ending_refused(found, session.approver):
            log.warning("web: refused ending a delegation that is not the person's own")
            return (404, DELEGATION_GONE) if found is None else (403, DELEGATION_NOT_YOURS)
        ended = await self._app.end_delegation(
            delegation_id, tenant_id=session.tenant_id, by=session.approver
        )
        return (200, DELEGATION_ENDED) if ended else (404, DELEGATION_GONE)

    async def _start(self, session: Link, fields: Mapping[str, str]) -> tuple[int, str]:
        delegate = fields.get(DELEGATE_FIELD, "").strip()[:MAX_FIELD] or None
        until_text = fields.get(UNTIL_FIELD, "").strip()
        ends_at = _moment(until_text)
        if until_text and ends_at is None:
            return 400, DELEGATION_END_UNREADABLE
        now = self._app.clock.now()
        problems = new_delegation_problems(
            delegator=session.approver,
            delegate=delegate,
            ends_at=ends_at,
            now=now,
            known=self._known,
        )
        if problems or delegate is None or ends_at is None:
            return 400, " ".join(problems.values())
        try:
            delegation = await self._app.delegate(
                tenant_id=session.tenant_id,
                delegator=session.approver,
                delegate=delegate,
                ends_in=ends_at - now,
                by=session.approver,
            )
        except CountersignError as error:
            return 400, error.message
        return 200, delegation_made(delegation.delegate, when(delegation.ends_at))

    def _known(self, person: str) -> bool:
        """Whether the web channels know ``person`` (an approver or an escalation's)."""
        return any(
            person in i.config.approvers or person in i.config.escalate_to
            for i in self._catalog.answered_by_channel()
        )

    async def tell_delegate(self, change: DelegationChange) -> None:
        """A notice to the delegate, when the web channels know them."""
        delegation = change.delegation
        if not self._known(delegation.delegate):
            return
        if change.kind == "started":
            roles = await self._roles_of(delegation)
            said = delegation_started(delegation.delegator, roles, when(delegation.ends_at))
        else:
            said = delegation_ended(delegation.delegator)
        notice = WebNotice(
            approver=delegation.delegate,
            url=self._outbox.inbox_url(
                approver=delegation.delegate, tenant_id=delegation.tenant_id
            ),
            tool="",
            tool_description="",
            role_description="",
            tenant_id=delegation.tenant_id,
            kind=NoticeKind.DELEGATION,
            title=said,
        )
        await notify_each(self._notifier, [notice])

    async def _roles_of(self, delegation: Delegation) -> str:
        async def among(people: Sequence[str]) -> bool:
            return delegation.delegator in people

        implementations = self._catalog.answered_by_channel()
        return roles_said(await delegated_roles(implementations, among))


def _moment(text: str) -> datetime | None:
    """The end a form gave (``2026-03-09T18:00``, a time zone or UTC), if readable."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text[:40])
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
