"""Standing grants as a person meets them: "Approve and allow similar …", computed once here and
rendered by each channel (Slack's modal, the web page's form, the lists of App Home and the
inbox).

- ``grant_offer``: the choices a waiting question offers, from its role's ``grants=`` scopes
  (for this thread; for this requester; for this agent up to an amount), how long, and the
  numeric argument a bound applies to (the call's own value by default);
- ``grant_request``: what a person chose, read from a form's three fields, as the
  ``App.grant`` arguments; a bad value is that field's error, nothing is answered;
- ``approve_and_grant``: approve this call and record the grant (``App.grant``'s checks: only
  an approver of the role; never a call its granter could not approve). The answer is recorded
  first (a decision is persisted before anything else), the grant before the run goes on (the
  run's next call may be the first it covers);
- ``grant_line``: a grant on one line for a person (never a pause id).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from pydantic import BaseModel

from bot.app import App
from bot.core.answers import Answered, AnswerOutcome
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import PauseAnswerer
from bot.core.errors import GrantRefusedError
from bot.core.grants import GRANT_SCOPE_KINDS, ArgumentConstraint, Grant, GrantScope
from bot.core.results import PauseView
from bot.core.sensitive import sensitive_fields
from bot.runtime.answers import AnswerCheck
from channels.kit.question import when
from channels.kit.texts import (
    GRANT_BOUND_NOT_A_NUMBER,
    GRANT_HOURS_UNKNOWN,
    GRANT_SCOPE_UNKNOWN,
    grant_scope_label,
)
from channels.kit.values import field_title, typed_number

GRANT_HOURS: Final[tuple[int, ...]] = (1, 8, 24)
"""For how long a person may allow similar requests (hours)."""
DEFAULT_GRANT_HOURS: Final = 8

SCOPE_FIELD: Final = "grant_scope"
HOURS_FIELD: Final = "grant_hours"
BOUND_FIELD: Final = "grant_bound"
"""The names of a grant form's three fields (the web's inputs, Slack's blocks)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GrantChoice:
    """One scope a question offers, in words."""

    kind: str
    """``thread``, ``requester`` or ``agent`` (``bot.core.grants.GrantScopeKind``)."""
    label: str
    """"for this thread", "for requests of U0ANN", "for the agent refund-agent"."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GrantOffer:
    """What "Approve and allow similar …" offers on one question."""

    choices: tuple[GrantChoice, ...]
    bound_field: str | None = None
    """The numeric argument an upper bound applies to (None: the call has none to bound)."""
    bound_title: str = ""
    """That argument as a person reads it ("Amount")."""
    bound_default: float | None = None
    """The call's own value of it: allow up to this much by default."""
    hours: tuple[int, ...] = GRANT_HOURS
    default_hours: int = DEFAULT_GRANT_HOURS

    def choice(self, kind: str) -> GrantChoice | None:
        return next((c for c in self.choices if c.kind == kind), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class GrantRequest:
    """What a person chose: ``App.grant``'s scope, constraint and lifetime."""

    scope: GrantScope
    constraint: ArgumentConstraint
    expires_in: timedelta


@dataclass(frozen=True, slots=True, kw_only=True)
class GrantProblems:
    """A grant form that cannot be read: an error per field (``SCOPE_FIELD``, ...)."""

    errors: Mapping[str, str]


def grant_offer(
    pause: PauseView, scopes: Sequence[str], *, tool_input: type[BaseModel] | None
) -> GrantOffer | None:
    """What ``pause`` offers to allow beside approving it (its role's ``scopes``); None when
    the role offers no grants, the question cannot be approved as it is, or it needs several
    approvers (a grant is one person's approval: a policy routed it to four eyes)."""
    if not pause.ask.allows_kind("approve") or pause.required_approvals > 1:
        return None
    kinds = offered_scopes(scopes, pause.answered_by)
    if not kinds:
        return None
    choices = tuple(
        GrantChoice(kind=k, label=grant_scope_label(k, owner=pause.owner_id, agent=pause.agent))
        for k in kinds
    )
    bound = _numeric_argument(pause.ask.arguments, tool_input)
    if bound is None:
        return GrantOffer(choices=choices)
    name, value = bound
    return GrantOffer(
        choices=choices,
        bound_field=name,
        bound_title=field_title(tool_input, name),
        bound_default=value,
    )


def offered_scopes(scopes: Sequence[str], answered_by: PauseAnswerer) -> tuple[str, ...]:
    """The scopes a role's question offers: those of ``grants=`` a person may give there (a
    THREAD_OWNER role's owner grants only for their own requests)."""
    kinds = tuple(k for k in GRANT_SCOPE_KINDS if k in scopes)
    if answered_by is PauseAnswerer.THREAD_OWNER:
        return tuple(k for k in kinds if k == "requester")
    return kinds


def _numeric_argument(
    arguments: Mapping[str, object], model: type[BaseModel] | None
) -> tuple[str, float] | None:
    """The first finite number among the call's arguments that is not sensitive."""
    hidden = sensitive_fields(model)
    for name, value in arguments.items():
        if name in hidden or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if math.isfinite(value):
            return name, float(value)
    return None


def grant_request(
    offer: GrantOffer, pause: PauseView, fields: Mapping[str, str]
) -> GrantRequest | GrantProblems:
    """The grant a form's ``fields`` ask for on ``pause`` (the scope the person picked, for how
    many hours, up to which bound: empty means the call's own value for an agent, no bound
    otherwise); else the errors by field."""
    errors: dict[str, str] = {}
    choice = offer.choice(fields.get(SCOPE_FIELD, "").strip())
    if choice is None:
        errors[SCOPE_FIELD] = GRANT_SCOPE_UNKNOWN
    hours_text = fields.get(HOURS_FIELD, "").strip() or str(offer.default_hours)
    hours = int(hours_text) if hours_text.isdigit() else 0
    if hours not in offer.hours:
        errors[HOURS_FIELD] = GRANT_HOURS_UNKNOWN
    agent = choice is not None and choice.kind == "agent"
    bound = _bound(offer, fields.get(BOUND_FIELD, ""), agent=agent)
    if isinstance(bound, str):
        errors[BOUND_FIELD] = bound
    if errors or choice is None or isinstance(bound, str):
        return GrantProblems(errors=errors)
    at_most = {} if bound is None or offer.bound_field is None else {offer.bound_field: bound}
    return GrantRequest(
        scope=_scope(choice.kind, pause),
        constraint=ArgumentConstraint(at_most=at_most),
        expires_in=timedelta(hours=hours),
    )


def _bound(offer: GrantOffer, raw: str, *, agent: bool) -> float | str | None:
    """The bound typed (as the question shows numbers: ``1,234.50``), or the call's own value
    for an agent's grant; an error's words for anything else."""
    if offer.bound_field is None:
        return None
    text = typed_number(raw).strip()
    if not text:
        return offer.bound_default if agent else None
    try:
        value = float(text)
    except ValueError:
        return GRANT_BOUND_NOT_A_NUMBER
    return value if math.isfinite(value) and value >= 0 else GRANT_BOUND_NOT_A_NUMBER


def _scope(kind: str, pause: PauseView) -> GrantScope:
    match kind:
        case "thread":
            return GrantScope(thread_id=pause.thread_id)
        case "requester":
            return GrantScope(owner_id=pause.owner_id)
        case _:
            return GrantScope(agent=pause.agent)


@dataclass(frozen=True, slots=True, kw_only=True)
class Granting:
    """What became of "approve and allow similar": the answer's outcome (as any answer's);
    once answered, the grant given, or why it was refused (the approval stands)."""

    outcome: AnswerOutcome
    grant: Grant | None = None
    refused: str | None = None


async def approve_and_grant(
    app: App,
    pause: PauseView,
    request: GrantRequest,
    *,
    by: str,
    may_answer: AnswerCheck,
) -> Granting:
    """Approve ``pause`` as ``by`` (``may_answer``: the channel's rule of who may), then give
    the grant ``request`` asks for, checked by ``App.grant`` with the same rule. The run is
    not moved on: the caller continues it (``App.continue_answer``) once it has told the
    person, so the grant is in place before the run's next call."""
    outcome = await app.answer(
        pause.pause_id,
        tenant_id=pause.tenant_id,
        by=by,
        decision=ToolCallApprovalDecision(approved=True),
        may_answer=may_answer,
        continue_run=False,
    )
    if not isinstance(outcome, Answered):
        return Granting(outcome=outcome)

    async def may_grant(granter: str) -> str | None:
        return await may_answer(pause)

    try:
        grant = await app.grant(
            tenant_id=pause.tenant_id,
            role=pause.role,
            tool=pause.ask.tool,
            by=by,
            scope=request.scope,
            constraint=request.constraint,
            expires_in=request.expires_in,
            may_grant=may_grant,
        )
    except GrantRefusedError as error:
        return Granting(outcome=outcome, refused=error.message)
    return Granting(outcome=outcome, grant=grant)


def grant_line(grant: Grant) -> str:
    """A grant for a person, on one line: what it allows, for whom, up to what, until when, who
    gave it and how often it was used (never a pause id)."""
    scope = grant.scope
    parts = [f"{grant.tool} ({grant.role})"]
    if scope.thread_id is not None:
        parts.append("in one thread")
    if scope.owner_id is not None:
        parts.append(f"for requests of {scope.owner_id}")
    if scope.agent is not None:
        parts.append(f"for the agent {scope.agent}")
    if grant.constraint.equals or grant.constraint.at_most:
        parts.append(grant.constraint.described())
    uses = "" if grant.max_uses is None else f" of {grant.max_uses}"
    parts.append(f"until {when(grant.expires_at)}")
    parts.append(f"by {grant.granted_by}, used {grant.uses}{uses}")
    return ", ".join(parts)


def may_revoke(grant: Grant, person: str, *, approver: bool) -> bool:
    """Whether ``person`` may revoke ``grant``: who gave it, or an ``approver`` of its role."""
    return approver or grant.granted_by == person


def now_active(grants: Sequence[Grant], now: datetime) -> list[Grant]:
    """The grants still in force, soonest to end first."""
    return sorted((g for g in grants if g.is_active(now)), key=lambda g: g.expires_at)
