"""Standing grants on the web: "Approve and allow similar…" as a section of a question's page
(a form posting ``action=grant`` to the question's link, with its CSRF token), and the inbox's
list of grants with a Revoke form each (posted to ``/inbox/grants`` with the inbox's CSRF).

What is offered, how a form is read and how a grant is given are the kit's
(``channels.kit.grants``); who may answer, grant and revoke is the web channel's rule (its
approvers), as for any answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Final

from bot.app import App
from bot.core.answers import Answered
from bot.core.enums import PauseAnswerer, PauseStatus
from bot.core.errors import CountersignError, UnknownGrantError
from bot.core.grants import Grant
from bot.core.results import PauseView
from channels.kit.grants import (
    BOUND_FIELD,
    HOURS_FIELD,
    SCOPE_FIELD,
    GrantOffer,
    GrantProblems,
    approve_and_grant,
    grant_line,
    grant_offer,
    grant_request,
    now_active,
    offered_scopes,
)
from channels.kit.texts import (
    GRANT_HOURS_LABEL,
    GRANT_MEANS,
    GRANT_NOT_OFFERED,
    GRANT_SCOPE_LABEL,
    GRANT_SUBMIT,
    GRANT_TITLE,
    GRANT_UNKNOWN,
    GRANTS_TITLE,
    NO_GRANTS,
    NO_LONGER_AVAILABLE,
    NOT_YOURS_TO_REVOKE,
    REVOKE,
    grant_bound_label,
    grant_hours_option,
    grant_refused,
    grant_revoked,
    granted,
)
from channels.kit.values import format_value
from channels.web.answering import Said, WebAnswering, closed_text
from channels.web.catalog import WebCatalog
from channels.web.links import Link
from channels.web.notify import log

GRANT_ACTION: Final = "grant"
"""The ``action`` of the question page's grant form."""
GRANTS_PATH: Final = "/inbox/grants"
"""Where the inbox's Revoke forms post (``grant`` = the grant's id)."""
GRANT_ID_FIELD: Final = "grant"


class WebGrants:
    """Approving with a grant from a question's page; the inbox's grants, revoked there."""

    def __init__(self, app: App, catalog: WebCatalog, answering: WebAnswering) -> None:
        self._app = app
        self._catalog = catalog
        self._answering = answering

    def offer(self, pause: PauseView) -> GrantOffer | None:
        """What the page of ``pause`` offers to allow beside approving it."""
        spec = self._catalog.role(pause.role)
        if spec is None or pause.status is not PauseStatus.PENDING:
            return None
        scopes = offered_scopes(spec.grants, spec.answered_by)
        return grant_offer(pause, scopes, tool_input=pause.tool_input)

    async def answer(self, link: Link, fields: Mapping[str, str]) -> Said:
        """Approve the link's question and record the grant its form asks for (a bad value:
        422 with its words, nothing answered); ``Said`` as for any answer."""
        pause = await self._app.find_pause(link.pause_id, tenant_id=link.tenant_id)
        if pause is None:
            return Said(status=404, text=NO_LONGER_AVAILABLE, closed=True)
        if pause.status is not PauseStatus.PENDING:
            return Said(status=409, text=closed_text(pause, None), closed=True)
        offer = self.offer(pause)
        if offer is None:
            log.warning("web: refused a grant form where no grant is offered")
            return Said(status=403, text=GRANT_NOT_OFFERED)
        request = grant_request(offer, pause, fields)
        if isinstance(request, GrantProblems):
            return Said(status=422, text=" ".join(dict.fromkeys(request.errors.values())))

        async def may_answer(view: PauseView) -> str | None:
            refusal = self._catalog.refusal(view, link.approver)
            if refusal is not None:
                return refusal
            return None if self._catalog.offers(view).allows("approve") else GRANT_UNKNOWN

        granting = await approve_and_grant(
            self._app, pause, request, by=link.approver, may_answer=may_answer
        )
        if not isinstance(granting.outcome, Answered):
            return await self._answering.said(granting.outcome)
        said = (
            granted(grant_line(granting.grant))
            if granting.grant is not None
            else grant_refused(granting.refused or "")
        )
        try:
            await self._app.continue_answer(granting.outcome)
        except CountersignError as error:  # recorded; the run's failure is its own
            log.warning("web: the run failed after an answer: %s", error.code)
        return Said(status=200, text=said, closed=True)

    # ---------------------------------------------------------------- the inbox

    async def for_approver(self, session: Link) -> list[Grant]:
        """The grants ``session``'s approver may revoke: those they gave, and those of the
        roles whose web channel they answer."""
        grants = await self._app.list_grants(tenant_id=session.tenant_id)
        active = now_active(grants, self._app.clock.now())
        return [g for g in active if self.may_revoke(g, session.approver)]

    def may_revoke(self, grant: Grant, approver: str) -> bool:
        if grant.granted_by == approver:
            return True
        found = self._catalog.of_role(grant.role)
        if found is None or found.config.answered_by is PauseAnswerer.THREAD_OWNER:
            return False
        return approver in found.config.approvers

    async def revoke(self, session: Link, grant_id: str) -> tuple[int, str]:
        """Revoke a grant from the inbox: the status and what the approver reads."""
        grants = await self._app.list_grants(tenant_id=session.tenant_id, include_inactive=True)
        grant = next((g for g in grants if g.grant_id == grant_id), None)
        if grant is None:
            return 404, GRANT_UNKNOWN
        if not self.may_revoke(grant, session.approver):
            log.warning("web: an approver may not revoke a grant: refused")
            return 403, NOT_YOURS_TO_REVOKE
        try:
            revoked = await self._app.revoke_grant(
                grant_id, tenant_id=session.tenant_id, by=session.approver
            )
        except UnknownGrantError:
            return 404, GRANT_UNKNOWN
        return 200, grant_revoked(grant_line(revoked))


# -------------------------------------------------------------------- rendering


def grant_section(offer: GrantOffer, *, csrf: str, csrf_field: str, action_field: str) -> str:
    """The question page's "Approve and allow similar…" form."""
    hidden = (
        f'<input type="hidden" name="{csrf_field}" value="{escape(csrf)}">'
        f'<input type="hidden" name="{action_field}" value="{GRANT_ACTION}">'
    )
    radios = "".join(
        f'<label><input type="radio" name="{SCOPE_FIELD}" value="{escape(c.kind)}"'
        f"{' checked' if i == 0 else ''}> {escape(c.label)}</label>"
        for i, c in enumerate(offer.choices)
    )
    hours = "".join(
        f'<option value="{h}"{" selected" if h == offer.default_hours else ""}>'
        f"{escape(grant_hours_option(h))}</option>"
        for h in offer.hours
    )
    bound = ""
    if offer.bound_field is not None:
        shown = (
            ""
            if offer.bound_default is None
            else format_value(None, offer.bound_field, offer.bound_default)
        )
        bound = (
            f'<label for="{BOUND_FIELD}">{escape(grant_bound_label(offer.bound_title))}</label>'
            f'<input type="text" id="{BOUND_FIELD}" name="{BOUND_FIELD}" maxlength="40" '
            f'inputmode="decimal" value="{escape(shown)}">'
        )
    return (
        f'<section class="grant"><h2>{escape(GRANT_TITLE)}</h2>'
        f'<p class="meta">{escape(GRANT_MEANS)}</p><form method="post">{hidden}'
        f"<fieldset><legend>{escape(GRANT_SCOPE_LABEL)}</legend>{radios}</fieldset>"
        f'<label for="{HOURS_FIELD}">{escape(GRANT_HOURS_LABEL)}</label>'
        f'<select id="{HOURS_FIELD}" name="{HOURS_FIELD}">{hours}</select>{bound}'
        f'<button class="primary">{escape(GRANT_SUBMIT)}</button></form></section>'
    )


def grants_section(grants: Sequence[Grant], *, csrf: str, csrf_field: str, notice: str = "") -> str:
    """The inbox's grants: one line each with a Revoke form (no pause id anywhere)."""
    said = f'<p class="notice">{escape(notice)}</p>' if notice else ""
    if not grants:
        return (
            f"<section><h2>{escape(GRANTS_TITLE)}</h2>{said}"
            f'<p class="meta">{escape(NO_GRANTS)}</p></section>'
        )
    items = "".join(
        f"<li>{escape(grant_line(g))}"
        f'<form method="post" action="{GRANTS_PATH}">'
        f'<input type="hidden" name="{csrf_field}" value="{escape(csrf)}">'
        f'<input type="hidden" name="{GRANT_ID_FIELD}" value="{escape(g.grant_id)}">'
        f'<button class="danger">{escape(REVOKE)}</button></form></li>'
        for g in grants
    )
    return (
        f'<section><h2>{escape(GRANTS_TITLE)}</h2>{said}<ul class="inbox grants">{items}</ul>'
        "</section>"
    )
