"""Answering a pause, channel-neutral: the one path every answer takes — ``App.answer`` under
every channel, ``App.resume`` under the spec's callers, ``App.read_kept`` and the sweep for a
reply kept to read later. It checks the request's shape, reads the pause once, checks who
answers by the role's rules, then that the pause still waits, then the channel's own
``may_answer``; then it reads a reply or validates a decision and records it: phase 1 of a
resume (phase 2, moving the tree on, is the engine's).

What became of the answer is a closed union carrying the pause as it now is
(``bot.core.answers``): refusals are outcomes, not exceptions (``App.resume`` raises the one it
got: ``answered_or_raise``). Nothing here moves the tree; every outcome but ``Answered`` leaves
the pause exactly as it was.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, assert_never

from bot.components.specs import ChannelRoleSpec, ReplyInterpreterSpec, spec_of
from bot.core.answers import (
    AlreadyClosed,
    Answered,
    AnswerOutcome,
    ApprovalCounted,
    NotUnderstood,
    Refused,
    ReplyKept,
)
from bot.core.approvals import shown_approvals
from bot.core.dtos import ToolCallApprovalDecision, decision_kind
from bot.core.enums import DecidedBy, PauseAnswerer, PauseResolution, PauseStatus
from bot.core.errors import (
    CountersignError,
    DtoValidationError,
    NotPausedError,
    PauseAnswererError,
    ReplyInterpreterMissingError,
    SelfApprovalError,
    ThreadOwnerError,
    UninterpretableReplyError,
    UnknownPauseError,
)
from bot.core.results import PauseView, ReceivedReply
from bot.core.tracing import link_to
from bot.runtime.approval_counts import (
    Counted,
    count_approval,
    needs_several,
    separates_duties,
)
from bot.runtime.assembly import ToolBinding
from bot.runtime.audit_masking import audit_mask
from bot.runtime.decisions import REASON_REQUIRED_IN_WORDS, check_reason
from bot.runtime.edit_checks import validate_for
from bot.runtime.handovers import PersonCheck, delegated
from bot.runtime.interpreting import ReplyModels, interpret_reply
from bot.runtime.observed_answers import observe_answer
from bot.runtime.services import Runtime
from bot.runtime.tree_guard import TreeGuard
from bot.store import closings
from bot.store.recent_pauses import ChangedSinceRead
from bot.store.records import PauseAnswer, PauseRecord

AnswerCheck = Callable[[PauseView], Awaitable[str | None]]
"""A channel's own rule of who may answer (Slack: approvers by user group), asked with the pause
once the runtime's rules passed: the words of a refusal for the person, or ``None``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerRequest:
    """An answer to a pause by ``by`` (the thread's owner or the channel's answerer: the pause
    says which): a decision or a free-text reply."""

    pause_id: str
    tenant_id: str
    by: str
    decision: ToolCallApprovalDecision | dict[str, Any] | None
    reply: str | None
    shown_round: int | None = None
    """Which proposal the person was shown (``Approvals.round``: how many edits replaced the
    question's arguments), when the channel knows it: an approval of a proposal replaced since
    is refused (``ProposalChangedError``), for a role that needs several approvals."""
    answering_as: PauseAnswerer | None = None
    """The kind of answerer the caller named ``by`` as, when it named one (``App.resume``:
    ``owner_id`` is the THREAD_OWNER credential, ``answered_by`` the CHANNEL one); a pause
    answered by the other kind refuses it (``pause.wrong-answerer``) and ``by`` is checked
    against the pause, not before the look-up. ``None``: the pause says which."""

    def __repr__(self) -> str:  # never print the pause id
        return f"AnswerRequest(tenant_id={self.tenant_id!r}, by={self.by!r})"


def named_answerer(
    owner_id: str | None, answered_by: str | None
) -> tuple[str, PauseAnswerer | None]:
    """``App.resume``'s credentials as the answer path takes them: exactly one of them named →
    who answers and as what; both or neither → nobody named (refused before the look-up)."""
    if owner_id is not None and answered_by is None:
        return owner_id, PauseAnswerer.THREAD_OWNER
    if answered_by is not None and owner_id is None:
        return answered_by, PauseAnswerer.CHANNEL
    return "", None


NOBODY_NAMED: Final = (
    "name who answers: a non-empty by (App.answer), or exactly one of owner_id and "
    "answered_by (App.resume)"
)
WRONG_CREDENTIAL: Final = {
    PauseAnswerer.THREAD_OWNER: (
        "this pause is answered by the thread's owner: pass owner_id, not answered_by"
    ),
    PauseAnswerer.CHANNEL: (
        "this pause is answered through its channel: pass a non-empty answered_by, not owner_id"
    ),
}


def check_shape(request: AnswerRequest) -> None:
    """Before any look-up: exactly one of decision or reply, a non-empty reply, the ids, and
    someone named to answer."""
    if (request.decision is None) == (request.reply is None):
        raise DtoValidationError("give exactly one of decision or reply")
    if request.reply is not None and not request.reply.strip():
        raise DtoValidationError("the reply is empty")
    if not isinstance(request.pause_id, str) or not request.pause_id:
        raise DtoValidationError("pause_id must be a non-empty string")
    if not isinstance(request.tenant_id, str) or not request.tenant_id:
        raise DtoValidationError("tenant_id must be a non-empty string")
    if request.answering_as is None and not _named(request.by):
        raise PauseAnswererError(NOBODY_NAMED)


def _named(by: object) -> bool:
    return isinstance(by, str) and bool(by.strip())


def responder_of(
    record: PauseRecord, request: AnswerRequest, role: ChannelRoleSpec | None = None
) -> str:
    """Who answers, by the pause's kind of answerer; raises for the wrong credential, and for
    the execution's owner when ``role`` separates duties."""
    kind = record.answered_by
    if request.answering_as is not None and request.answering_as is not kind:
        raise PauseAnswererError(WRONG_CREDENTIAL[kind])
    if kind is PauseAnswerer.THREAD_OWNER:
        if request.by != record.owner_id:
            raise ThreadOwnerError(
                f"only the owner of thread {record.thread_id} may answer this pause"
            )
        return request.by
    if not _named(request.by):
        raise PauseAnswererError(WRONG_CREDENTIAL[kind])
    if separates_duties(role, record) and request.by == record.owner_id:
        raise SelfApprovalError(
            f"{request.by} asked for this call and the role {record.role} separates "
            "duties: someone else must answer it (the question still waits)"
        )
    return request.by


def past_deadline(record: PauseRecord, now: datetime) -> bool:
    """A question still PENDING after the quorum deadline it waits under takes no answer: the
    join has gone (or is about to go) on without it."""
    return record.closes_at is not None and now >= record.closes_at


def not_paused(record: PauseRecord, now: datetime) -> NotPausedError:
    if record.status is PauseStatus.PENDING and past_deadline(record, now):
        assert record.closes_at is not None
        return NotPausedError(
            f"the question closed at its deadline ({record.closes_at.isoformat()}): "
            "the decision went on without it"
        )
    if record.answer is not None or record.status in (PauseStatus.RESOLVED, PauseStatus.TAKEN):
        who = record.answer.responder if record.answer and record.answer.responder else None
        by = f" by {who}" if who else ""
        return NotPausedError(f"the question was already answered{by}")
    return NotPausedError("the question is no longer needed (it was withdrawn or cancelled)")


async def answer(
    runtime: Runtime,
    models: ReplyModels,
    request: AnswerRequest,
    *,
    view: Callable[[PauseRecord], PauseView],
    may_answer: AnswerCheck | None = None,
    may_answer_as: PersonCheck | None = None,
    keep_model_replies: bool = False,
    opening: TreeGuard | None = None,
    open_tree: bool = True,
) -> AnswerOutcome:
    """Check and record an answer with one read of the pause (none for a decision on a question
    this process's last write left in the store's memory, ``PauseStore.remembered``, when the
    answer is recorded as it was checked); what became of it. Refusals are outcomes, not
    exceptions: only a failure of the store or of a model's provider raises. Each outcome is
    counted (``countersign_answers``) and logged, once.

    ``opening``: a continuation may follow in this process: an answer that resolves the pause
    opens its tree in the same write when the tree is free (``TreeGuard.keep``) — unless
    ``open_tree`` is False (the write stays the answer alone; a tree kept for another
    continuation still learns of it)."""
    checks = _Checks(
        view=view,
        may_answer=may_answer,
        may_answer_as=may_answer_as,
        keep_model_replies=keep_model_replies,
        opening=opening,
        open_tree=open_tree,
    )
    outcome = await _answer(runtime, models, request, checks)
    observe_answer(runtime.metrics, outcome, tenant_id=request.tenant_id, by=request.by)
    return outcome


async def _answer(
    runtime: Runtime, models: ReplyModels, request: AnswerRequest, checks: _Checks
) -> AnswerOutcome:
    try:
        check_shape(request)
    except CountersignError as error:
        return Refused(pause=None, error=error)
    if request.reply is None and checks.opening is not None and checks.open_tree:
        remembered = runtime.store.remembered(request.tenant_id, request.pause_id)
        if remembered is not None:  # as this process's last write left it: no read
            try:
                outcome = await _answer_record(runtime, models, request, remembered, checks)
            except ChangedSinceRead:  # nothing written: checked again on the row as it is
                outcome = None
            if isinstance(outcome, Answered):
                return outcome
            # any other outcome is told from the row read, never from one kept in memory
    record = await runtime.store.find(request.tenant_id, request.pause_id)
    if record is None:
        return Refused(pause=None, error=UnknownPauseError())
    return await _answer_record(runtime, models, request, record, checks)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Checks:
    """How an answer is checked and recorded (``answer``'s keywords)."""

    view: Callable[[PauseRecord], PauseView]
    may_answer: AnswerCheck | None
    may_answer_as: PersonCheck | None
    keep_model_replies: bool
    opening: TreeGuard | None
    open_tree: bool


async def _answer_record(
    runtime: Runtime,
    models: ReplyModels,
    request: AnswerRequest,
    record: PauseRecord,
    checks: _Checks,
) -> AnswerOutcome:
    """``_answer`` on ``record``: read just now, or remembered (``record.row_version``: then
    every way but the one write that is exact about the row raises ``ChangedSinceRead``
    before it writes anything)."""
    view = checks.view
    current = view(record)
    binding = binding_of(runtime, record)
    try:  # who may answer before how it closed: a stranger holding the id learns nothing of it
        responder = responder_of(record, request, None if binding is None else binding.role)
    except CountersignError as error:
        return Refused(pause=current, error=error)
    now = runtime.clock.now()
    if record.status is not PauseStatus.PENDING or past_deadline(record, now):
        return AlreadyClosed(pause=current, error=not_paused(record, now))
    try:
        refusal = None if checks.may_answer is None else await checks.may_answer(current)
        if refusal is not None:  # the channel's rule refuses: a delegate may answer still
            if record.row_version is not None:  # a handover is written: on the row read
                raise ChangedSinceRead(record.pause_id)
            handed = await delegated(runtime, record, current, responder, checks.may_answer_as)
            if handed is None:
                raise PauseAnswererError(refusal)
            record = handed
        keeps = checks.keep_model_replies
        if request.reply is not None and keeps and reads_with_a_model(runtime, record):
            await _keep(runtime, record, request, responder)
            return ReplyKept(pause=current, received=_received(record, request, responder))
        resolved = await _record(
            runtime,
            models,
            record,
            binding,
            responder,
            request,
            checks.opening,
            open_tree=checks.open_tree,
        )
    except NotPausedError as error:
        latest = await runtime.store.find(request.tenant_id, request.pause_id)
        return AlreadyClosed(pause=view(latest or record), error=error)
    except (UninterpretableReplyError, ReplyInterpreterMissingError) as error:
        read = error if isinstance(error, UninterpretableReplyError) else None
        return NotUnderstood(
            pause=current,
            reply=request.reply or "",
            reason=error.message if read is None else read.reason,
            error=error,
            language=None if read is None else read.language,
        )
    except CountersignError as error:
        return Refused(pause=current, error=error)
    if isinstance(resolved, Counted):
        return ApprovalCounted(
            pause=view(resolved.record),
            root_execution_id=record.root_execution_id,
            approval=shown_approvals((resolved.entry,))[0],
            still_needed=resolved.still_needed,
        )
    return Answered(
        pause=view(resolved), root_execution_id=resolved.root_execution_id, answered_by=responder
    )


def answered_or_raise(outcome: AnswerOutcome) -> Answered | ApprovalCounted:
    """The answer recorded (or an approval counted), or the refusal it met raised
    (``App.resume``'s way with the union: ``UnknownPauseError``, ``PauseAnswererError``,
    ``NotPausedError``, ``UninterpretableReplyError``... each the error its case carries)."""
    match outcome:
        case Answered() | ApprovalCounted():
            return outcome
        case NotUnderstood(error=error):
            raise error
        case AlreadyClosed(error=error):
            raise error
        case Refused(error=error):
            raise error
        case ReplyKept():  # only kept when asked to (keep_model_replies): resume never asks
            raise AssertionError("a reply was kept where none was to be kept")
        case _ as never:
            assert_never(never)


def binding_of(runtime: Runtime, record: PauseRecord) -> ToolBinding | None:
    """The binding ``record`` was asked under (its tool within its asker, under its role)."""
    return runtime.assembly.binding_of(record.ask.tool, agent=record.agent, role=record.role)


def _check_reason(
    runtime: Runtime, record: PauseRecord, decision: ToolCallApprovalDecision, *, from_reply: bool
) -> None:
    """A rejection without the reason the question's role requires (the role it was asked
    under) is refused; a reply that gave none is not understood, with how to give it."""
    role = runtime.assembly.roles_by_name.get(record.role)
    if role is None:
        return
    try:
        check_reason(decision, role.reject_reason)
    except DtoValidationError:
        if from_reply:
            raise UninterpretableReplyError(REASON_REQUIRED_IN_WORDS) from None
        raise


def reads_with_a_model(runtime: Runtime, record: PauseRecord) -> bool:
    """Whether the pause's role reads replies with a model: reading may outlast a webhook's
    acknowledgement, so a channel keeps such a reply before it acknowledges."""
    role = runtime.assembly.roles_by_name.get(record.role)
    interpreter = None if role is None else spec_of(role.reply_interpreter)
    return isinstance(interpreter, ReplyInterpreterSpec) and (
        interpreter.decided_by is DecidedBy.MODEL
    )


def _received(record: PauseRecord, request: AnswerRequest, responder: str) -> ReceivedReply:
    assert request.reply is not None  # only replies are kept
    owners = record.answered_by is PauseAnswerer.THREAD_OWNER
    return ReceivedReply(
        pause_id=request.pause_id,
        tenant_id=request.tenant_id,
        reply=request.reply,
        owner_id=responder if owners else None,
        answered_by=None if owners else responder,
    )


async def _keep(
    runtime: Runtime, record: PauseRecord, request: AnswerRequest, responder: str
) -> None:
    """Keep a free-text reply to read after the ack, checked like an answer but not read yet:
    a reader that takes longer than the ack may, and a process that dies before reading it
    loses nothing (the sweep reads it)."""
    assert request.reply is not None
    kept = await runtime.store.receive_reply(
        request.tenant_id, request.pause_id, request.reply, responder, runtime.clock.now()
    )
    if not kept:
        current = await runtime.store.find(request.tenant_id, request.pause_id)
        raise not_paused(current or record, runtime.clock.now())


async def _record(
    runtime: Runtime,
    models: ReplyModels,
    record: PauseRecord,
    binding: ToolBinding | None,
    responder: str,
    request: AnswerRequest,
    opening: TreeGuard | None = None,
    *,
    open_tree: bool = True,
) -> PauseRecord | Counted:
    """Read a reply (or validate a decision) and record it: PENDING → RESOLVED — or, for a
    role that needs several approvals, count an approval (``Counted`` while more are needed).
    The span it runs in (answer, resume) links to the pass that asked, maybe in another
    process."""
    required = needs_several(runtime, record)
    if record.row_version is not None and (request.reply is not None or required > 1):
        raise ChangedSinceRead(record.pause_id)  # written otherwise than exactly: on the row read
    link_to(record.trace_context, why="asked")
    tool_input = None if binding is None else binding.spec.input
    model_call: int | None = None
    if request.reply is not None:
        reading = await interpret_reply(
            runtime, models, record, request.reply, tool_input, binding=binding
        )
        decision, model_call = reading.decision, reading.model_call
    else:
        decision = validate_for(binding, request.decision, arguments=record.proposed_arguments)
    if not record.ask.allows(decision):
        allowed = ", ".join(record.ask.allowed_decisions or ())
        raise DtoValidationError(
            f"this question takes only {allowed}, not {decision_kind(decision)} (it still waits)"
        )
    _check_reason(runtime, record, decision, from_reply=request.reply is not None)
    mask = await audit_mask(runtime, record, tool_input)
    resolved: PauseRecord | Counted | None
    if required > 1 and decision.approved:
        resolved = await count_approval(
            runtime,
            record,
            decision,
            shown_round=request.shown_round,
            responder=responder,
            reply=request.reply,
            required=required,
            mask=mask,
        )
    else:
        given = PauseAnswer(
            decision=decision.model_dump(mode="json"), responder=responder, reply=request.reply
        )
        closing = closings.Replied(answer=given, audit_decision=mask.decision(decision))
        resolved = await _close(runtime, record, request, closing, opening, open_tree=open_tree)
    if resolved is None:
        current = await runtime.store.find(request.tenant_id, request.pause_id)
        raise not_paused(current or record, runtime.clock.now())
    if model_call is not None:  # the call that read this answer: in the execution's spend, once
        await models.ledger.count_in_execution_spend(model_call)
    if isinstance(resolved, Counted):
        return resolved
    resolution = (resolved.resolution or PauseResolution.DECIDED).value
    resolved_at = resolved.resolved_at or runtime.clock.now()
    runtime.metrics.answer_time(resolved.role, resolution, resolved_at - resolved.asked_at)
    return resolved


async def _close(
    runtime: Runtime,
    record: PauseRecord,
    request: AnswerRequest,
    closing: closings.Replied,
    opening: TreeGuard | None,
    *,
    open_tree: bool,
) -> PauseRecord | None:
    """Record the answer (PENDING → RESOLVED); when a continuation may follow here
    (``opening``) and no pass holds the tree in this process now, the same write takes the
    tree's lease and opens it, kept for the continuation (issue 32: the open is no write of
    its own), unless ``open_tree`` is False. A lease held by another instance leaves the
    answer recorded alone, as without ``opening``: the continuation then opens the tree
    itself, waiting for that pass."""
    at = runtime.clock.now()
    locked = None
    if opening is not None and open_tree:
        locked = await opening.lock_now(record.root_execution_id)
    if opening is None or locked is None:
        if record.row_version is not None:  # this write is not exact about the row
            raise ChangedSinceRead(record.pause_id)
        alone = await runtime.store.close(
            request.pause_id, closing, at=at, tenant_id=request.tenant_id
        )
        if opening is not None and alone is not None:
            opening.answered_beside(record.root_execution_id)
        return alone
    try:
        closed = await runtime.store.close_opening(
            request.pause_id,
            closing,
            at=at,
            tenant_id=request.tenant_id,
            lease=locked.claim,
            known=record,  # its audit entry computed before the write: one statement (PostgreSQL)
        )
    except BaseException:  # not written (or unknown: a lease written expires, recovery's then)
        opening.unlock(locked)
        raise
    tree = closed.tree
    if tree is None or tree.released:  # held elsewhere (or the tree ended): nothing held here
        opening.unlock(locked)
    else:
        opening.keep(locked, tree)
    return closed.record
