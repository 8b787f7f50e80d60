"""Handing questions on, at answer time: a question reassigned to a person, and standing
delegations. Part of the one answer path (``bot.runtime.answers``): where the channel's rule
refuses a person, the runtime lets them answer when the question was reassigned to them, or
when a standing delegation of someone the channel's rule takes is theirs — never their own
request. Each handover is kept on the pause (``PauseRecord.handovers``) and in its audit entry.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Final

from bot.core.delegations import Delegation, DelegationChange, Handover, NewDelegation
from bot.core.enums import PauseAnswerer, PauseStatus
from bot.core.errors import (
    DtoValidationError,
    NotPausedError,
    PauseAnswererError,
    SelfApprovalError,
    UnknownPauseError,
)
from bot.core.results import PauseView
from bot.runtime.services import Runtime
from bot.store.records import PauseRecord

PersonCheck = Callable[[PauseView, str], Awaitable[str | None]]
"""A channel's rule of who may answer, for any person (``App.answer(..., may_answer_as=)``):
the words of a refusal for that person, or ``None``. A standing delegation is applied with it
(the delegate may answer what the rule lets the delegator answer)."""

ATTEMPTS: Final = 5
OWN_REQUEST: Final = "{who} asked for this: it cannot be handed to them (someone else must answer)"


def handed_to(record: PauseRecord, person: str) -> bool:
    """Whether the question was reassigned to ``person``."""
    return any(h.to == person and h.kind == "reassigned" for h in record.handovers)


async def delegated(
    runtime: Runtime,
    record: PauseRecord,
    pause: PauseView,
    person: str,
    may_answer_as: PersonCheck | None,
) -> PauseRecord | None:
    """``record`` (with the handover it is answered under kept) when ``person``, refused by the
    channel's rule, may answer it as a delegate; None when not."""
    if record.answered_by is not PauseAnswerer.CHANNEL or person == record.owner_id:
        return None  # never their own request
    if handed_to(record, person):
        return record
    if may_answer_as is None:
        return None
    now = runtime.clock.now()
    for delegation in await runtime.delegations.active_for(record.tenant_id, person, now):
        if delegation.delegator == record.owner_id:
            continue  # the delegator's own request: nobody answers it in their name
        if await may_answer_as(pause, delegation.delegator) is None:
            return await _keep(runtime, record, _under(delegation, now))
    return None


async def may_answer_as_delegate(
    runtime: Runtime, pause: PauseView, person: str, may_answer_as: PersonCheck | None
) -> bool:
    """Whether ``person`` may answer ``pause`` as a delegate (the same rule as the answer
    path's, without writing anything): for a page that shows its forms to them."""
    if pause.answered_by is not PauseAnswerer.CHANNEL or person == pause.owner_id:
        return False
    if any(h.to == person and h.kind == "reassigned" for h in pause.handovers):
        return True
    if may_answer_as is None:
        return False
    now = runtime.clock.now()
    for delegation in await runtime.delegations.active_for(pause.tenant_id, person, now):
        if delegation.delegator == pause.owner_id:
            continue
        if await may_answer_as(pause, delegation.delegator) is None:
            return True
    return False


def _under(delegation: Delegation, now: datetime) -> Handover:
    return Handover(
        by=delegation.delegator,
        to=delegation.delegate,
        at=now.isoformat(),
        kind="delegation",
        delegation_id=delegation.delegation_id,
    )


async def _keep(runtime: Runtime, record: PauseRecord, handover: Handover) -> PauseRecord:
    """``record`` with ``handover`` written (once: a delegation already noted is not again)."""
    current = record
    for _ in range(ATTEMPTS):
        noted = any(
            h.to == handover.to and h.delegation_id == handover.delegation_id
            for h in current.handovers
        )
        if noted:
            return current
        written = await runtime.store.record_handover(
            current.pause_id,
            handover,
            tenant_id=current.tenant_id,
            version=current.approvals.version,
            at=runtime.clock.now(),
        )
        if written is not None:
            return written
        latest = await runtime.store.find(current.tenant_id, current.pause_id)
        if latest is None or latest.status is not PauseStatus.PENDING:
            raise NotPausedError("the question was answered or closed meanwhile")
        current = latest
    return current  # answered under the delegation all the same; the audit may not say so


async def reassign(
    runtime: Runtime,
    pause_id: str,
    *,
    tenant_id: str,
    by: str,
    to: str,
    may_answer: Callable[[PauseView], Awaitable[str | None]] | None,
    view: Callable[[PauseRecord], PauseView],
) -> PauseView:
    """Hand the waiting question to ``to`` (who may answer it since; whoever could still may),
    by ``by``, who may answer it (the channel's rule ``may_answer``, or a reassignment to
    them). The pause as it now is."""
    if not isinstance(to, str) or not to.strip():
        raise DtoValidationError("name the person to hand the question to")
    record = await runtime.store.find(tenant_id, pause_id)
    if record is None:
        raise UnknownPauseError()
    if record.answered_by is not PauseAnswerer.CHANNEL:
        raise PauseAnswererError("a question for the thread's owner is theirs: it is not handed on")
    if to == record.owner_id:
        raise SelfApprovalError(OWN_REQUEST.format(who=to))
    for _ in range(ATTEMPTS):
        if record.status is not PauseStatus.PENDING:
            raise NotPausedError("the question no longer waits: it cannot be handed on")
        refusal = None if may_answer is None else await may_answer(view(record))
        if refusal is not None and not handed_to(record, by):
            raise PauseAnswererError(refusal)
        if handed_to(record, to):
            return view(record)
        now = runtime.clock.now()
        handover = Handover(by=by, to=to, at=now.isoformat())
        written = await runtime.store.record_handover(
            pause_id, handover, tenant_id=tenant_id, version=record.approvals.version, at=now
        )
        if written is not None:
            return view(written)
        latest = await runtime.store.find(tenant_id, pause_id)
        if latest is None:
            raise UnknownPauseError()
        record = latest
    raise NotPausedError("the question changed too often while it was handed on; try again")


async def delegate(
    runtime: Runtime,
    *,
    tenant_id: str,
    delegator: str,
    delegate: str,
    ends_in: timedelta,
    by: str | None,
) -> Delegation:
    """Store a standing delegation from now for ``ends_in``."""
    if not delegator.strip() or not delegate.strip():
        raise DtoValidationError("name the delegator and the delegate")
    if delegator == delegate:
        raise DtoValidationError("a delegation hands questions to someone else")
    if ends_in <= timedelta(0):
        raise DtoValidationError("a delegation ends after it starts: give a positive duration")
    now = runtime.clock.now()
    return await runtime.delegations.add(
        NewDelegation(
            delegation_id=f"d-{uuid.uuid4().hex[:12]}",
            tenant_id=tenant_id,
            delegator=delegator,
            delegate=delegate,
            created_by=by or delegator,
            created_at=now,
            ends_at=now + ends_in,
        )
    )


UNTOLD_BATCH: Final = 50
"""How many owed delegation notices one sweep takes."""
TELLING_HOLD: Final = timedelta(seconds=60)
"""How long a taker holds the telling of a delegation's change (its channels owe it in a few
database writes); a taker that died before recording it told leaves it to the sweep then."""

EmitDelegation = Callable[[DelegationChange], Awaitable[bool]]
"""Tell a change to every channel; whether every one of them owes it now."""


async def tell(runtime: Runtime, change: DelegationChange, emit: EmitDelegation) -> bool:
    """Tell ``change`` at least once and, across instances and processes, once: its telling is
    taken (held for ``TELLING_HOLD``), told through ``emit``, and only then recorded told. A
    process dying in between leaves it untold: the sweep tells it again once the hold lapsed,
    marked ``again`` so that a channel looks before it says it twice. False when another
    taker holds it or it was told already."""
    delegation = change.delegation
    now = runtime.clock.now()
    taken = await runtime.delegations.take_telling(
        delegation.tenant_id,
        delegation.delegation_id,
        change.kind,
        now=now,
        until=now + TELLING_HOLD,
    )
    if taken is None:
        return False
    if not await emit(dataclasses.replace(change, again=taken == "again")):
        return False  # a channel could not owe it: told again once the hold lapsed
    await runtime.delegations.mark_told(
        delegation.tenant_id, delegation.delegation_id, change.kind, at=runtime.clock.now()
    )
    return True


async def tell_untold(runtime: Runtime, emit: EmitDelegation) -> int:
    """Tell what delegates are still owed (a delegation added or ended by the command line,
    another process, or one whose teller died): how many were told."""
    told = 0
    for change in await runtime.delegations.untold(runtime.clock.now(), limit=UNTOLD_BATCH):
        told += await tell(runtime, change, emit)
    return told
