"""What waits for one person: the one query behind Slack's ``/pending`` and App Home, the web
inbox, and any other channel's list.

A person may answer the pauses of CHANNEL roles whose implementation names them as an
approver (those a policy routed: whose route names them), once escalated those whose
``escalate_to`` names them, and the THREAD_OWNER pauses of threads they own; as a delegate,
the CHANNEL questions reassigned to them and those an active standing delegation of theirs
covers (what its delegator may answer by the channel's rule), never their own request nor the
delegator's (the rule of ``App.answer``). Nor, where its role separates duties, a question
the person asked for themselves, though they approve its role: the runtime refuses every
answer of theirs (``channels.kit.answerers.refuses_requester``). What expires first is at the
top, then the newest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from bot.app import App
from bot.core.enums import PauseAnswerer
from bot.core.results import PendingPause
from bot.core.time_left import expiring_first
from channels.kit.answerers import Among, refuses_requester
from channels.kit.catalog import Implementation, KitCatalog
from channels.kit.texts import answering_for, handed_to_you_by

MAX_LISTED: Final = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class HandedOn:
    """Why a delegate is asked a question: ``by`` reassigned it to them, or (``until`` set)
    they answer for ``by`` under a standing delegation until then."""

    by: str
    until: datetime | None = None

    def said(self, person: Callable[[str], str], date: Callable[[datetime], str]) -> str:
        """The line a list shows with the question, people and the date written by the
        channel (``person``: a mention in Slack, the id on the web)."""
        if self.until is None:
            return handed_to_you_by(person(self.by))
        return answering_for(person(self.by), date(self.until))


@dataclass(frozen=True, slots=True, kw_only=True)
class Waiting:
    """One question waiting for the person; ``escalated_to_them``: they may answer it only
    because it was escalated to them."""

    pending: PendingPause
    escalated_to_them: bool = False
    handed_to_them: bool = False
    """They may answer it as a delegate: it was reassigned to them, or a standing delegation
    of theirs covers it."""
    handed: HandedOn | None = None
    """Why, when ``handed_to_them``: who handed it to them, or whom they answer for."""


async def waiting_for(
    app: App,
    catalog: KitCatalog[Any],
    *,
    tenant_id: str,
    person: str,
    among: Among,
    owner_roles: Sequence[str] | None = None,
    implementations: Sequence[Implementation[Any]] | None = None,
    among_for: Callable[[str], Among] | None = None,
) -> list[Waiting]:
    """The pauses ``person`` may answer, in the order shown. ``among(ids)``: whether the
    person is among these approvers (the channel's rule). ``owner_roles``: the THREAD_OWNER
    roles to list (None: every role whose owner is ``person``; empty: none).
    ``implementations``: the CHANNEL roles' implementations as the tenant's workspace set
    them (None: the catalog's own). ``among_for(other)``: the channel's rule for another
    person, to list what ``person``'s standing delegations cover (None: only what was
    reassigned to them)."""
    listed = await _own(app, catalog, tenant_id, person, among, owner_roles, implementations)
    listed += await _handed_on(
        app, catalog, tenant_id, person, listed, among_for, implementations=implementations
    )
    shown = [
        w
        for w in listed
        if w.pending.pause_id is not None and not _theirs_refused(catalog, w.pending, person)
    ]
    return sorted(shown, key=lambda w: expiring_first(w.pending.expires_at, w.pending.asked_at))


def _theirs_refused(catalog: KitCatalog[Any], pending: PendingPause, person: str) -> bool:
    """A CHANNEL question ``person`` asked for, of a role that refuses its requester (a
    THREAD_OWNER question is always its owner's to answer)."""
    return pending.answered_by is PauseAnswerer.CHANNEL and refuses_requester(
        pending, person, catalog.role_separates_duties
    )


async def _own(
    app: App,
    catalog: KitCatalog[Any],
    tenant_id: str,
    person: str,
    among: Among,
    owner_roles: Sequence[str] | None,
    implementations: Sequence[Implementation[Any]] | None,
) -> list[Waiting]:
    """What ``person`` may answer by the channel's rule (no handover), unsorted."""
    mine: set[str] = set()
    escalation: set[str] = set()
    if implementations is None:
        implementations = catalog.answered_by_channel()
    for implementation in implementations:
        config = implementation.config
        if await among(config.approvers):
            mine.add(config.role)
        elif config.escalate_to and await among(config.escalate_to):
            escalation.add(config.role)
    escalation -= mine
    listed: list[Waiting] = []
    for pending in await _channel_pauses(app, tenant_id, mine | escalation):
        if await _approves(pending, mine, among):
            listed.append(Waiting(pending=pending))
        elif pending.role in escalation and pending.escalated:
            listed.append(Waiting(pending=pending, escalated_to_them=True))
    others = {i.config.role for i in catalog.answered_by_channel()} - mine - escalation
    listed += [  # questions a policy routed to this person, of roles they do not approve
        Waiting(pending=p)
        for p in await _channel_pauses(app, tenant_id, others)
        if _routed(p) and await among(_routed(p))
    ]
    if owner_roles is None or owner_roles:
        owned = await app.list_pending(
            tenant_id=tenant_id,
            answered_by=PauseAnswerer.THREAD_OWNER,
            owner_id=person,
            roles=None if owner_roles is None else sorted(owner_roles),
            limit=MAX_LISTED,
        )
        listed += [Waiting(pending=p) for p in owned]
    return listed


async def _approves(pending: PendingPause, mine: set[str], among: Among) -> bool:
    """Whether the person approves ``pending``: named by its route, where a policy routed it;
    else as an approver of its role."""
    routed = _routed(pending)
    return await among(routed) if routed else pending.role in mine


def _routed(pending: PendingPause) -> tuple[str, ...]:
    """The approvers a policy routed ``pending`` to, instead of its channel's (none: its
    channel's)."""
    return () if pending.route is None else pending.route.approvers


async def _channel_pauses(app: App, tenant_id: str, roles: set[str] | None) -> list[PendingPause]:
    """The waiting CHANNEL pauses of ``roles`` (None: of every role)."""
    if roles is not None and not roles:
        return []
    return await app.list_pending(
        tenant_id=tenant_id,
        answered_by=PauseAnswerer.CHANNEL,
        roles=None if roles is None else sorted(roles),
        include_channel_pause_ids=True,
        limit=MAX_LISTED,
    )


async def _handed_on(
    app: App,
    catalog: KitCatalog[Any],
    tenant_id: str,
    person: str,
    listed: list[Waiting],
    among_for: Callable[[str], Among] | None,
    *,
    implementations: Sequence[Implementation[Any]] | None,
) -> list[Waiting]:
    """The CHANNEL questions ``person`` may answer as a delegate, not in ``listed`` already:
    reassigned to them, or covered by an active standing delegation of theirs."""
    seen = {w.pending.pause_id for w in listed}
    found: list[Waiting] = []

    def add(pending: PendingPause, why: HandedOn, *, not_by: str | None = None) -> None:
        if pending.pause_id in seen or pending.owner_id in (person, not_by):
            return  # never their own request (nor the delegator's)
        seen.add(pending.pause_id)
        found.append(Waiting(pending=pending, handed_to_them=True, handed=why))

    for pending in await _channel_pauses(app, tenant_id, None):
        to_them = [h for h in pending.handovers if h.to == person and h.kind == "reassigned"]
        if to_them:
            add(pending, HandedOn(by=to_them[-1].by))
    if among_for is None:
        return found
    for delegation in await app.list_delegations(tenant_id=tenant_id):
        if delegation.delegate != person:
            continue
        delegator = delegation.delegator
        theirs = await _own(
            app, catalog, tenant_id, delegator, among_for(delegator), (), implementations
        )
        for waiting in theirs:
            if waiting.pending.answered_by is PauseAnswerer.CHANNEL:
                why = HandedOn(by=delegator, until=delegation.ends_at)
                add(waiting.pending, why, not_by=delegation.delegator)
    return found
