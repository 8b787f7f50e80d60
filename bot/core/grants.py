"""Standing grants: "approve and allow similar" — what a grant covers, and nothing else (no I/O).

A grant is given by an approver of a role, for one tool of it, in one tenant, within a scope
(this thread, this requester, this agent: each one given must match), with a constraint on the
call's arguments (each ``equals`` argument equal, each ``at_most`` numeric argument at most its
bound), until it expires and for at most ``max_uses`` uses. A later question it covers is
decided at once, the grant's id and granter in its audit entry.

Fail-closed: a grant covers a call only when every one of these holds; an expired, revoked or
used-up grant covers nothing; it is never applied to another tool, role or tenant; and it never
covers a call its granter could not approve (their own request under separation of duties; a
THREAD_OWNER role's call of anyone but the granter).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from bot.core.enums import PauseAnswerer

GrantScopeKind = Literal["thread", "requester", "agent"]
"""A scope a role offers (``@channel_role(..., grants=[...])``): for this thread, for this
requester, for this agent."""
GRANT_SCOPE_KINDS: Final[tuple[GrantScopeKind, ...]] = ("thread", "requester", "agent")

GRANT_RESPONDER_PREFIX: Final = "grant:"
"""How a decision by a grant is recorded (``grant:<grant id>:<granter>``): no user id holds a
colon, so a person is never taken for a grant."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GrantScope:
    """Whose calls a grant covers: each field given must match the call (None: any)."""

    thread_id: str | None = None
    """Only the calls of this thread (the execution's thread)."""
    owner_id: str | None = None
    """Only the calls made for this requester (the execution's owner)."""
    agent: str | None = None
    """Only the calls of this agent (our agent's name, or the attached graph's)."""

    @property
    def kinds(self) -> tuple[GrantScopeKind, ...]:
        """The scopes it names."""
        named: list[GrantScopeKind] = []
        if self.thread_id is not None:
            named.append("thread")
        if self.owner_id is not None:
            named.append("requester")
        if self.agent is not None:
            named.append("agent")
        return tuple(named)

    @property
    def is_open(self) -> bool:
        """Whether it names nothing (every call of the tool in the tenant): refused."""
        return self.thread_id is None and self.owner_id is None and self.agent is None


@dataclass(frozen=True, slots=True, kw_only=True)
class ArgumentConstraint:
    """What a covered call's arguments must be: ``equals`` each equal, ``at_most`` each a
    finite number at most its bound. Empty: any arguments (within the scope)."""

    equals: Mapping[str, Any] = field(default_factory=dict)
    at_most: Mapping[str, float] = field(default_factory=dict)

    def allows(self, arguments: Mapping[str, Any]) -> bool:
        for name, value in self.equals.items():
            if name not in arguments or arguments[name] != value:
                return False
        for name, bound in self.at_most.items():
            value = arguments.get(name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                return False
            if not math.isfinite(value) or value > bound:
                return False
        return True

    def described(self) -> str:
        """In words, for a list: ``amount ≤ 50.00, currency = EUR``."""
        parts = [f"{k} ≤ {v:.2f}" for k, v in self.at_most.items()]
        parts += [f"{k} = {v}" for k, v in self.equals.items()]
        return ", ".join(parts) or "any arguments"


@dataclass(frozen=True, slots=True, kw_only=True)
class NewGrant:
    """A grant about to be stored."""

    grant_id: str
    tenant_id: str
    role: str
    tool: str
    granted_by: str
    scope: GrantScope
    constraint: ArgumentConstraint
    created_at: datetime
    expires_at: datetime
    max_uses: int | None = None
    """None: as many as fall before it expires."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Grant:
    """A standing grant as stored: how often it was used, and whether it was revoked."""

    grant_id: str
    tenant_id: str
    role: str
    tool: str
    granted_by: str
    scope: GrantScope
    constraint: ArgumentConstraint
    created_at: datetime
    expires_at: datetime
    max_uses: int | None
    uses: int = 0
    revoked_at: datetime | None = None
    revoked_by: str | None = None

    def is_active(self, now: datetime) -> bool:
        """Not revoked, not expired, not used up."""
        if self.revoked_at is not None or now >= self.expires_at:
            return False
        return self.max_uses is None or self.uses < self.max_uses

    def covers(self, call: GrantedCall, now: datetime) -> bool:
        """Whether this grant decides ``call`` at ``now`` (every rule of the module's
        docstring)."""
        if not self.is_active(now):
            return False
        if (call.tenant_id, call.role, call.tool) != (self.tenant_id, self.role, self.tool):
            return False
        scope = self.scope
        if scope.thread_id is not None and scope.thread_id != call.thread_id:
            return False
        if scope.owner_id is not None and scope.owner_id != call.owner_id:
            return False
        if scope.agent is not None and scope.agent != call.agent:
            return False
        if not could_approve(self.granted_by, call):
            return False
        return self.constraint.allows(call.arguments)

    def line(self, now: datetime) -> str:
        """One line for a list (``python -m bot grants list``): never a pause id."""
        scope = ", ".join(
            f"{k}={v}"
            for k, v in (
                ("thread", self.scope.thread_id),
                ("requester", self.scope.owner_id),
                ("agent", self.scope.agent),
            )
            if v is not None
        )
        uses = f"{self.uses}/{self.max_uses}" if self.max_uses is not None else f"{self.uses}/∞"
        state = "active" if self.is_active(now) else _inactive(self, now)
        return (
            f"{self.grant_id}  {state}  tenant={self.tenant_id}  role={self.role}  "
            f"tool={self.tool}  by={self.granted_by}  {scope}  {self.constraint.described()}  "
            f"uses={uses}  expires={self.expires_at.isoformat()}"
        )

    def __repr__(self) -> str:
        return f"Grant(grant_id={self.grant_id!r}, role={self.role!r}, tool={self.tool!r})"


def _inactive(grant: Grant, now: datetime) -> str:
    if grant.revoked_at is not None:
        return "revoked"
    return "expired" if now >= grant.expires_at else "used-up"


@dataclass(frozen=True, slots=True, kw_only=True)
class GrantedCall:
    """A call a grant may cover: where it is asked, for whom, with what."""

    tenant_id: str
    role: str
    tool: str
    thread_id: str
    owner_id: str
    agent: str
    arguments: Mapping[str, Any]
    answered_by: PauseAnswerer
    separation_of_duties: bool = False


def could_approve(granter: str, call: GrantedCall) -> bool:
    """Whether ``granter`` could answer ``call`` themselves: only its owner answers a
    THREAD_OWNER role's question; under separation of duties, never the call's owner."""
    if call.answered_by is PauseAnswerer.THREAD_OWNER:
        return granter == call.owner_id
    return not (call.separation_of_duties and granter == call.owner_id)


def grant_responder(grant: Grant) -> str:
    """The responder a decision by ``grant`` is recorded with."""
    return f"{GRANT_RESPONDER_PREFIX}{grant.grant_id}:{grant.granted_by}"


def grant_of_responder(responder: str | None) -> tuple[str, str] | None:
    """``(grant id, granter)`` of a decision by a grant; None for anyone else."""
    if responder is None or not responder.startswith(GRANT_RESPONDER_PREFIX):
        return None
    grant_id, colon, granter = responder.removeprefix(GRANT_RESPONDER_PREFIX).partition(":")
    return (grant_id, granter) if colon and grant_id else None
