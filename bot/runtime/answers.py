"""Answering a pause, channel-neutral: check the request, who answers and the answer, then
record it (phase 1 of a resume; phase 2, moving the tree on, is the engine's).

``answer`` is the one call every channel's inbound side makes: it reads the pause once, asks
the channel's own rule (``may_answer``) if it has one, and returns what became of the answer as
a closed union carrying the pause as it now is (``bot.core.answers``). Nothing here moves the
tree; every outcome but ``Answered`` leaves the pause exactly as it was.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.components.specs import ChannelRoleSpec, ReplyInterpreterSpec, spec_of
from bot.core.answers import (
    AlreadyClosed,
    Answered,
    AnswerOutcome,
    NotUnderstood,
    Refused,
    ReplyKept,
)
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
from bot.runtime.assembly import ToolBinding
from bot.runtime.audit_masking import audit_mask
from bot.runtime.decisions import REASON_REQUIRED_IN_WORDS, check_reason
from bot.runtime.edit_checks import validate_for
from bot.runtime.interpreting import ReplyModels, interpret_reply
from bot.runtime.observed_answers import AnswerNote, note_answer, observe_answer, verdict_of
from bot.runtime.services import Runtime
from bot.store import closings
from bot.store.records import PauseAnswer, PauseRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumeRequest:
    pause_id: str
    tenant_id: str
    decision: ToolCallApprovalDecision | dict[str, Any] | None
    reply: str | None
    owner_id: str | None
    answered_by: str | None

    def check_shape(self) -> None:
        """Exactly one of decision or reply; a non-empty reply; before any look-up."""
        if (self.decision is None) == (self.reply is None):
            raise DtoValidationError("give exactly one of decision or reply")
        if self.reply is not None and not self.reply.strip():
            raise DtoValidationError("the reply is empty")
        if not isinstance(self.pause_id, str) or not self.pause_id:
            raise DtoValidationError("pause_id must be a non-empty string")
        if not isinstance(self.tenant_id, str) or not self.tenant_id:
            raise DtoValidationError("tenant_id must be a non-empty string")


def check_answerer(
    record: PauseRecord, request: ResumeRequest, role: ChannelRoleSpec | None = None
) -> str:
    """Who answers, by the pause's kind of answerer; raises for the wrong credential, and for
    the execution's owner when ``role`` separates duties."""
    if record.answered_by is PauseAnswerer.THREAD_OWNER:
        if request.answered_by is not None or request.owner_id is None:
            raise PauseAnswererError(
                "this pause is answered by the thread's owner: pass owner_id, not answered_by"
            )
        if request.owner_id != record.owner_id:
            raise ThreadOwnerError(
                f"only the owner of thread {record.thread_id} may answer this pause"
            )
        return request.owner_id
    if request.owner_id is not None or not request.answered_by or not request.answered_by.strip():
        raise PauseAnswererError(
            "this pause is answered through its channel: pass a non-empty answered_by, not owner_id"
        )
    if role is not None and role.separation_of_duties and request.answered_by == record.owner_id:
        raise SelfApprovalError(
            f"{request.answered_by} asked for this call and the role {role.name} separates "
            "duties: someone else must answer it (the question still waits)"
        )
    return request.answered_by


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


async def _waiting(
    runtime: Runtime, request: ResumeRequest
) -> tuple[PauseRecord, ToolBinding | None, str]:
    """The pause ``request`` answers, if it still waits and the credential is right: the
    record, its tool's binding and who answers. Raises the refusals of any answer."""
    record = await _found(runtime, request)
    return (record, *_admitted(runtime, record, request))


async def _found(runtime: Runtime, request: ResumeRequest) -> PauseRecord:
    record = await runtime.store.find(request.tenant_id, request.pause_id)
    if record is None:
        raise UnknownPauseError()
    return record


def _admitted(
    runtime: Runtime, record: PauseRecord, request: ResumeRequest
) -> tuple[ToolBinding | None, str]:
    """The tool's binding and who answers, if the credential is right and the pause waits."""
    binding = binding_of(runtime, record)
    responder = check_answerer(record, request, None if binding is None else binding.role)
    now = runtime.clock.now()
    if record.status is not PauseStatus.PENDING or past_deadline(record, now):
        raise not_paused(record, now)
    return binding, responder


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


async def answer(
    runtime: Runtime,
    models: ReplyModels,
    request: AnswerRequest,
    *,
    view: Callable[[PauseRecord], PauseView],
    may_answer: AnswerCheck | None = None,
    keep_model_replies: bool = False,
) -> AnswerOutcome:
    """Check and record an answer with one read of the pause; what became of it. Refusals are
    outcomes, not exceptions: only a failure of the store or of a model's provider raises.
    Each outcome is counted (``countersign_answers``)."""
    outcome = await _answer(
        runtime,
        models,
        request,
        view=view,
        may_answer=may_answer,
        keep_model_replies=keep_model_replies,
    )
    observe_answer(runtime.metrics, outcome, tenant_id=request.tenant_id, by=request.by)
    return outcome


async def _answer(
    runtime: Runtime,
    models: ReplyModels,
    request: AnswerRequest,
    *,
    view: Callable[[PauseRecord], PauseView],
    may_answer: AnswerCheck | None,
    keep_model_replies: bool,
) -> AnswerOutcome:
    shape = ResumeRequest(
        pause_id=request.pause_id,
        tenant_id=request.tenant_id,
        decision=request.decision,
        reply=request.reply,
        owner_id=None,
        answered_by=None,
    )
    try:
        shape.check_shape()
        if not isinstance(request.by, str) or not request.by.strip():
            raise PauseAnswererError("by must name who answers (a non-empty string)")
    except CountersignError as error:
        return Refused(pause=None, error=error)
    record = await runtime.store.find(request.tenant_id, request.pause_id)
    if record is None:
        return Refused(pause=None, error=UnknownPauseError())
    current = view(record)
    now = runtime.clock.now()
    if record.status is not PauseStatus.PENDING or past_deadline(record, now):
        return AlreadyClosed(pause=current, error=not_paused(record, now))
    owners = record.answered_by is PauseAnswerer.THREAD_OWNER
    resume = ResumeRequest(
        pause_id=request.pause_id,
        tenant_id=request.tenant_id,
        decision=request.decision,
        reply=request.reply,
        owner_id=request.by if owners else None,
        answered_by=None if owners else request.by,
    )
    binding = binding_of(runtime, record)
    try:
        responder = check_answerer(record, resume, None if binding is None else binding.role)
        refusal = None if may_answer is None else await may_answer(current)
        if refusal is not None:
            raise PauseAnswererError(refusal)
        if resume.reply is not None and keep_model_replies and reads_with_a_model(runtime, record):
            await _keep(runtime, record, resume, responder)
            return ReplyKept(pause=current, received=_received(resume))
        resolved = await _record(runtime, models, record, binding, responder, resume)
    except NotPausedError as error:
        latest = await runtime.store.find(request.tenant_id, request.pause_id)
        return AlreadyClosed(pause=view(latest or record), error=error)
    except (UninterpretableReplyError, ReplyInterpreterMissingError) as error:
        reason = error.reason if isinstance(error, UninterpretableReplyError) else error.message
        return NotUnderstood(pause=current, reply=request.reply or "", reason=reason, error=error)
    except CountersignError as error:
        return Refused(pause=current, error=error)
    return Answered(
        pause=view(resolved), root_execution_id=resolved.root_execution_id, answered_by=responder
    )


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


def _received(request: ResumeRequest) -> ReceivedReply:
    assert request.reply is not None  # only replies are kept
    return ReceivedReply(
        pause_id=request.pause_id,
        tenant_id=request.tenant_id,
        reply=request.reply,
        owner_id=request.owner_id,
        answered_by=request.answered_by,
    )


async def receive_reply(runtime: Runtime, request: ResumeRequest) -> PauseRecord:
    """Keep a free-text reply to read after the ack: checked like an answer (the shape, who
    answers, that the pause waits) but not read yet, so a reader that takes longer than the
    ack may, or a process that dies before reading it, loses nothing."""
    request.check_shape()
    if request.reply is None:
        raise DtoValidationError("receive_reply takes a reply, not a decision")
    record, _, responder = await _waiting(runtime, request)
    await _keep(runtime, record, request, responder)
    return record


async def _keep(
    runtime: Runtime, record: PauseRecord, request: ResumeRequest, responder: str
) -> None:
    assert request.reply is not None
    kept = await runtime.store.receive_reply(
        request.tenant_id, request.pause_id, request.reply, responder, runtime.clock.now()
    )
    if not kept:
        current = await runtime.store.find(request.tenant_id, request.pause_id)
        raise not_paused(current or record, runtime.clock.now())


async def record_answer(
    runtime: Runtime, request: ResumeRequest, models: ReplyModels
) -> PauseRecord:
    """Phase 1: returns the pause as it now is (RESOLVED, with its answer); observed like
    ``answer``'s outcomes (a refusal raised is counted and logged with its code)."""
    role: str | None = None

    def noted(outcome: str, error: CountersignError | None = None, what: str = "") -> None:
        note = AnswerNote(
            outcome=outcome, code="" if error is None else error.code, role=role, what=what
        )
        by = request.owner_id or request.answered_by or ""
        note_answer(runtime.metrics, note, tenant_id=request.tenant_id, by=by)

    try:
        request.check_shape()
        record = await _found(runtime, request)
        role = record.role
        binding, responder = _admitted(runtime, record, request)
        resolved = await _record(runtime, models, record, binding, responder, request)
    except NotPausedError as error:
        noted("already_closed", error)
        raise
    except (UninterpretableReplyError, ReplyInterpreterMissingError) as error:
        noted("not_understood", error)
        raise
    except CountersignError as error:
        noted("refused", error)
        raise
    decision = None if resolved.answer is None else resolved.answer.decision
    noted("answered", what=f"{verdict_of(decision)} {resolved.ask.tool}")
    return resolved


async def _record(
    runtime: Runtime,
    models: ReplyModels,
    record: PauseRecord,
    binding: ToolBinding | None,
    responder: str,
    request: ResumeRequest,
) -> PauseRecord:
    """Read a reply (or validate a decision) and record it: PENDING → RESOLVED. The span it
    runs in (answer, resume) links to the pass that asked, maybe in another process."""
    link_to(record.trace_context, why="asked")
    tool_input = None if binding is None else binding.spec.input
    model_call: int | None = None
    if request.reply is not None:
        reading = await interpret_reply(
            runtime, models, record, request.reply, tool_input, binding=binding
        )
        decision, model_call = reading.decision, reading.model_call
    else:
        decision = validate_for(binding, request.decision, arguments=record.ask.arguments)
    if not record.ask.allows(decision):
        allowed = ", ".join(record.ask.allowed_decisions or ())
        raise DtoValidationError(
            f"this question takes only {allowed}, not {decision_kind(decision)} (it still waits)"
        )
    _check_reason(runtime, record, decision, from_reply=request.reply is not None)
    given = PauseAnswer(
        decision=decision.model_dump(mode="json"), responder=responder, reply=request.reply
    )
    resolved_at = runtime.clock.now()
    resolved = await runtime.store.close(
        request.pause_id,
        closings.Answered(
            answer=given,
            audit_decision=(await audit_mask(runtime, record, tool_input)).decision(decision),
        ),
        at=resolved_at,
        tenant_id=request.tenant_id,
    )
    if resolved is None:
        current = await runtime.store.find(request.tenant_id, request.pause_id)
        raise not_paused(current or record, runtime.clock.now())
    if model_call is not None:  # the call that read this answer: in the execution's spend, once
        await models.ledger.count_in_execution_spend(model_call)
    resolution = (resolved.resolution or PauseResolution.DECIDED).value
    runtime.metrics.answer_time(resolved.role, resolution, resolved_at - resolved.asked_at)
    return resolved
