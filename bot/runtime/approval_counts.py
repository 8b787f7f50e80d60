"""Counting approvals of a question that needs several (a role's ``required_approvals``).

Part of the one answer path (``bot.runtime.answers``): an approval of such a question is added
to its approvals, atomically (the store writes them only if they are still the version read;
of two approvers at once on two instances, one writes and the other reads again and adds its
own), and the approval that makes the count closes the question in the same write, with the
approved proposal as the decision. An edit replaces the proposal: the approvals before it are
void, the editor's is the first of the new round. A rejection is not counted here: it closes
the question as any answer does, and the audit entry keeps the approvals it ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from bot.components.specs import ChannelRoleSpec
from bot.core.approvals import ApprovalEntry, Approvals
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import PauseStatus
from bot.core.errors import AlreadyApprovedError, ProposalChangedError, StorageError
from bot.runtime.audit_masking import AuditMask
from bot.runtime.services import Runtime
from bot.store import closings
from bot.store.records import PauseAnswer, PauseRecord

ATTEMPTS: Final = 20
"""How often an approval is tried again after another one was written first: each retry
follows a write that succeeded elsewhere, so this many means as many approvers at once."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Counted:
    """An approval written, and the question still waits for more."""

    record: PauseRecord
    entry: ApprovalEntry
    still_needed: int


def needs_several(runtime: Runtime, record: PauseRecord) -> int:
    """How many approvals ``record`` requires (1: one answer closes it)."""
    return required_for(runtime.assembly.roles_by_name.get(record.role), record)


def required_for(role: ChannelRoleSpec | None, record: PauseRecord) -> int:
    """How many approvals ``record`` requires: its policy's route's count where it set one
    (never fewer than the role's: ``bot.runtime.policies``), else its role's."""
    routed = None if record.route is None else record.route.required_approvals
    if routed is not None:
        return routed
    return 1 if role is None else role.required_approvals


def separates_duties(role: ChannelRoleSpec | None, record: PauseRecord) -> bool:
    """Whether ``record``'s requester is refused as its approver: the role separates duties,
    or it needs several approvals (four eyes are two people who are not the requester)."""
    return (role is not None and role.separates_duties) or required_for(role, record) > 1


async def count_approval(
    runtime: Runtime,
    record: PauseRecord,
    decision: ToolCallApprovalDecision,
    *,
    responder: str,
    reply: str | None,
    required: int,
    mask: AuditMask,
    shown_round: int | None = None,
) -> PauseRecord | Counted | None:
    """Add ``responder``'s approval (``decision``, approved) to ``record``'s: the closed
    pause when it made the count, ``Counted`` when more are needed, None when the question
    no longer waits (closed meanwhile, or past its deadline). Raises ``AlreadyApprovedError``
    for a second approval of the same proposal by the same person, ``ProposalChangedError``
    when an edit replaced the proposal meanwhile."""
    seen_round = record.approvals.round if shown_round is None else shown_round
    current = record
    for _ in range(ATTEMPTS):
        state = current.approvals
        if state.round != seen_round:
            raise ProposalChangedError(
                "another approver edited the proposal while you answered: look at the new "
                "one and approve it if you agree (the question still waits)"
            )
        if state.has_approved(responder):
            raise AlreadyApprovedError(
                f"{responder} approved this already; {_needed(required, state)} more "
                "approver(s) must approve it (the question still waits)"
            )
        now = runtime.clock.now()
        entry, new = _with_approval(current, state, decision, responder, now=now, mask=mask)
        enough = len(new.counted) >= required
        closing = _closing(current, new, decision, responder, reply, mask) if enough else None
        written = await runtime.store.record_approvals(
            current.pause_id, new, tenant_id=current.tenant_id, at=now, closing=closing
        )
        if written is not None:
            if enough:
                return written
            return Counted(record=written, entry=entry, still_needed=_needed(required, new))
        latest = await runtime.store.find(current.tenant_id, current.pause_id)
        if latest is None or latest.status is not PauseStatus.PENDING:
            return None
        if latest.approvals.version == state.version:  # not a race: its deadline passed
            return None
        current = latest
    raise StorageError(  # pragma: no cover - as many approvers at once as ATTEMPTS
        f"the approval of {responder} lost {ATTEMPTS} races in a row; try again"
    )


def _needed(required: int, state: Approvals) -> int:
    return max(0, required - len(state.counted))


def _with_approval(
    record: PauseRecord,
    state: Approvals,
    decision: ToolCallApprovalDecision,
    responder: str,
    *,
    now: Any,
    mask: AuditMask,
) -> tuple[ApprovalEntry, Approvals]:
    """The approval and the approvals with it: of the standing proposal, or (an edit that
    changes it) the first of a new one."""
    proposal = state.proposal if state.proposal is not None else dict(record.ask.arguments)
    edited = {**proposal, **(decision.override_arguments or {})}
    if edited != proposal:
        entry = ApprovalEntry(
            by=responder,
            at=now,
            round=state.round + 1,
            arguments=mask.arguments(edited),
            edited=True,
        )
        return entry, state.edited(entry, edited)
    entry = ApprovalEntry(
        by=responder, at=now, round=state.round, arguments=mask.arguments(proposal)
    )
    return entry, state.approved(entry)


def _closing(
    record: PauseRecord,
    approvals: Approvals,
    decision: ToolCallApprovalDecision,
    responder: str,
    reply: str | None,
    mask: AuditMask,
) -> closings.Replied:
    """The answer that closes the question once enough approved: the standing proposal
    (what the tool runs with; none when it is the question's own)."""
    changed = approvals.proposal is not None and approvals.proposal != record.ask.arguments
    final = ToolCallApprovalDecision(
        approved=True,
        reason=decision.reason,
        override_arguments=dict(approvals.proposal or {}) if changed else None,
    )
    return closings.Replied(
        answer=PauseAnswer(
            decision=final.model_dump(mode="json"), responder=responder, reply=reply
        ),
        audit_decision=mask.decision(final),
    )
