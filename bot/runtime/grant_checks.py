"""Standing grants at work: given (``App.grant``, checked first), listed, revoked, and used by
a question they cover before it is sent (``bot.runtime.seam``).

Fail-closed: no grant, an expired, revoked or used-up one, one of another tool, role or
tenant, one whose granter could not approve the call, a store that cannot be read — the
question is asked. A use is counted (atomically, across instances) in the transaction that
records the decision: a pass that dies never loses a use, nor approves twice.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Awaitable, Callable
from datetime import timedelta

from bot.components.specs import ChannelRoleSpec
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import PauseAnswerer
from bot.core.errors import GrantRefusedError, UnknownGrantError
from bot.core.field_errors import failure_text
from bot.core.grants import (
    ArgumentConstraint,
    Grant,
    GrantedCall,
    GrantScope,
    NewGrant,
    grant_of_responder,
)
from bot.runtime.assembly import ToolBinding
from bot.runtime.services import Runtime, log
from bot.store.records import PauseRecord

MayGrant = Callable[[str], Awaitable[str | None]]
"""A channel's own rule of who is an approver of the role (Slack: its approvers and user
groups), asked with the granter: the words of a refusal, or ``None``."""


async def covering_grants(
    runtime: Runtime, binding: ToolBinding, record: PauseRecord
) -> list[tuple[Grant, ToolCallApprovalDecision]]:
    """The grants that cover ``record`` now, oldest first, each with the approval it gives;
    none when a person is to be asked (also when the store cannot be read: fail-closed). A
    grant's use is counted as the pause is closed by it, in one transaction
    (``DecidedAtOnce.grant_id``): the caller tries them in turn."""
    role = binding.role
    if role is None or not role.grants:
        return []
    call = GrantedCall(
        tenant_id=record.tenant_id,
        role=record.role,
        tool=record.ask.tool,
        thread_id=record.thread_id,
        owner_id=record.owner_id,
        agent=record.agent,
        arguments=record.ask.arguments,
        answered_by=record.answered_by,
        separation_of_duties=role.separates_duties,
    )
    now = runtime.clock.now()
    try:
        candidates = await runtime.grants.candidates(call.tenant_id, call.role, call.tool, now)
    except Exception as error:  # fail-closed: an unreadable store asks
        log.warning(
            "grant.failed: %s; the question is asked (execution_id=%s tenant_id=%s)",
            failure_text(error),
            record.execution_id,
            record.tenant_id,
            extra={"execution_id": record.execution_id, "outcome": "grant-failed"},
        )
        return []
    covering = []
    for grant in candidates:
        decision = ToolCallApprovalDecision(approved=True, reason=_reason(grant))
        if grant.covers(call, now) and record.ask.allows(decision):
            covering.append((grant, decision))
    return covering


def described_grant(responder: str) -> str:
    """How a channel names a grant that decided ("grant g-1a2b of U0ANN")."""
    named = grant_of_responder(responder)
    return responder if named is None else f"grant {named[0]} of {named[1]}"


def _reason(grant: Grant) -> str:
    return f"allowed by {grant.granted_by} until {grant.expires_at.isoformat()}"


async def give_grant(
    runtime: Runtime,
    *,
    tenant_id: str,
    role: str,
    tool: str,
    by: str,
    scope: GrantScope,
    expires_in: timedelta,
    constraint: ArgumentConstraint | None = None,
    max_uses: int | None = None,
    may_grant: MayGrant | None = None,
) -> Grant:
    """Store a grant after every check; ``GrantRefusedError`` saying why otherwise."""
    spec = runtime.assembly.roles_by_name.get(role)
    constraint = constraint or ArgumentConstraint()
    _check(runtime, spec, role=role, tool=tool, by=by, scope=scope)
    _check_bounds(expires_in, max_uses, constraint)
    if may_grant is not None:
        refusal = await may_grant(by)
        if refusal is not None:
            raise GrantRefusedError(refusal)
    now = runtime.clock.now()
    return await runtime.grants.add(
        NewGrant(
            grant_id=f"g-{secrets.token_hex(6)}",
            tenant_id=tenant_id,
            role=role,
            tool=tool,
            granted_by=by,
            scope=scope,
            constraint=constraint,
            created_at=now,
            expires_at=now + expires_in,
            max_uses=max_uses,
        )
    )


def _check(
    runtime: Runtime,
    spec: ChannelRoleSpec | None,
    *,
    role: str,
    tool: str,
    by: str,
    scope: GrantScope,
) -> None:
    if spec is None:
        raise GrantRefusedError(f"no role named {role!r} in this application")
    if not spec.grants:
        raise GrantRefusedError(f"the role {role} offers no grants (@channel_role(grants=...))")
    if not tool or not _asks_about(runtime, spec, tool):
        raise GrantRefusedError(f"the role {role} asks about no tool named {tool!r}")
    if not isinstance(by, str) or not by.strip():
        raise GrantRefusedError("name who grants: a non-empty by")
    if scope.is_open:
        raise GrantRefusedError("name a scope: a thread, a requester or an agent")
    unoffered = [kind for kind in scope.kinds if kind not in spec.grants]
    if unoffered:
        offered = ", ".join(spec.grants)
        raise GrantRefusedError(
            f"the role {role} offers grants for {offered}, not for {', '.join(unoffered)}"
        )
    if spec.answered_by is PauseAnswerer.THREAD_OWNER and scope.owner_id != by:
        raise GrantRefusedError(
            f"the role {role} is answered by the thread's owner: {by} may grant only for their "
            "own requests (scope owner_id the granter)"
        )
    if spec.separates_duties and scope.owner_id == by:
        raise GrantRefusedError(
            f"the role {role} separates duties: {by} may not approve their own requests, so "
            "may not grant for them"
        )


def _asks_about(runtime: Runtime, spec: ChannelRoleSpec, tool: str) -> bool:
    """Whether a question of ``spec`` may be about ``tool``: one of our tools asking it, or
    any tool of a graph attached under it (its tools are the graph's)."""
    assembly = runtime.assembly
    if any(b.role is spec and b.spec.name == tool for b in assembly.tools.values()):
        return True
    return any(
        graph.role is spec or spec in (r for r, _ in graph.roles.values())
        for graph in assembly.attached_graphs.values()
    )


def _check_bounds(
    expires_in: timedelta, max_uses: int | None, constraint: ArgumentConstraint
) -> None:
    if not isinstance(expires_in, timedelta) or expires_in <= timedelta(0):
        raise GrantRefusedError("expires_in must be a positive timedelta: a grant always ends")
    if max_uses is not None and (
        isinstance(max_uses, bool) or not isinstance(max_uses, int) or max_uses < 1
    ):
        raise GrantRefusedError(f"max_uses must be a whole number of at least 1, not {max_uses!r}")
    for name, bound in constraint.at_most.items():
        if (
            isinstance(bound, bool)
            or not isinstance(bound, int | float)
            or not math.isfinite(bound)
        ):
            raise GrantRefusedError(f"at_most[{name!r}] must be a finite number, not {bound!r}")


async def revoke_grant(runtime: Runtime, grant_id: str, *, tenant_id: str, by: str) -> Grant:
    """Revoke the tenant's grant (from the next ask on, on every instance); the grant as it
    now is. ``UnknownGrantError`` for an id the tenant has not; revoking twice is a no-op."""
    revoked = await runtime.grants.revoke(tenant_id, grant_id, by=by, at=runtime.clock.now())
    if not revoked and await runtime.grants.get(tenant_id, grant_id) is None:
        raise UnknownGrantError()
    found = await runtime.grants.get(tenant_id, grant_id)
    assert found is not None
    return found
