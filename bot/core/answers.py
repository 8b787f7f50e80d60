"""What ``App.answer`` returns: a closed union, each case with the pause as it now is. It is the
one answer path's result under every channel; ``App.resume`` (the spec's name) takes the same
path and raises the error of any case but ``Answered``.

Match it exhaustively (``assert_never``)::

    match await app.answer(pause_id, tenant_id=t, by=user, decision=decision):
        case Answered(pause=pause, result=result): ...       # recorded (and continued)
        case ApprovalCounted(pause=pause): ...                # one of several approvals
        case ReplyKept(pause=pause): ...                      # read it later: App.read_kept
        case NotUnderstood(pause=pause, reason=reason): ...   # a reply that says no answer
        case AlreadyClosed(pause=pause): ...                  # answered, withdrawn, cancelled
        case Refused(pause=pause, error=error): ...           # not this person, or not valid
        case _ as never: assert_never(never)

Nothing but ``Answered`` and ``ApprovalCounted`` changed anything: the pause of every other case
still waits (or was already closed), so the person can be told why and try again.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.approvals import Approval
from bot.core.errors import (
    CountersignError,
    NotPausedError,
    ReplyInterpreterMissingError,
    UninterpretableReplyError,
)
from bot.core.results import ExecutionResult, PauseView, ReceivedReply


@dataclass(frozen=True, slots=True, kw_only=True)
class Answered:
    """The answer was recorded: ``pause`` is RESOLVED, with it. ``result`` is where the run
    stands once continued; ``None`` when the caller continues it later
    (``App.continue_answer(answered)``, e.g. after a webhook's acknowledgement)."""

    pause: PauseView
    root_execution_id: str
    answered_by: str
    result: ExecutionResult | None = None

    def __repr__(self) -> str:
        return f"Answered(pause={self.pause!r})"


RecordedAnswer = Answered
"""The old name of an answer recorded but not yet continued (``Answered`` with ``result``
``None``: ``App.answer(..., continue_run=False)``), kept working."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalCounted:
    """An approval recorded and counted, and the question still waits for more (its role's
    ``required_approvals``): ``pause`` is PENDING, ``pause.approvals`` lists who approved
    what; ``still_needed`` more distinct approvers must approve the standing proposal. Nothing
    moved: tell the person, and show the others who approved."""

    pause: PauseView
    root_execution_id: str
    approval: Approval
    """The approval just counted (who, what they approved, whether it was an edit)."""
    still_needed: int

    def __repr__(self) -> str:
        return f"ApprovalCounted(pause={self.pause!r}, still_needed={self.still_needed})"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyKept:
    """A reply the role reads with a model, kept unread (``keep_model_replies=True``): read it
    after the acknowledgement with ``App.read_kept``; the sweep reads it if nobody does."""

    pause: PauseView
    received: ReceivedReply

    def __repr__(self) -> str:
        return f"ReplyKept(pause={self.pause!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class NotUnderstood:
    """A free-text reply that gives no answer (a question, a condition, …) or a role that reads
    no replies; ``reason`` says which, in words for the person who wrote it. ``language`` is the
    language the interpreter read the reply in (a code such as "de"), when it knew one: tell
    the person how to answer in it."""

    pause: PauseView
    reply: str
    reason: str
    error: UninterpretableReplyError | ReplyInterpreterMissingError
    language: str | None = None

    def __repr__(self) -> str:
        return f"NotUnderstood(pause={self.pause!r}, code={self.error.code!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlreadyClosed:
    """The question no longer waits: ``pause`` says how it closed (answered by whom, decided,
    withdrawn, cancelled, past its deadline)."""

    pause: PauseView
    error: NotPausedError

    def __repr__(self) -> str:
        return f"AlreadyClosed(pause={self.pause!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class Refused:
    """Not taken: ``error`` says why (``pause.unknown``, ``pause.wrong-answerer``,
    ``pause.not-thread-owner``, ``pause.self-approval``, ``dto.invalid``, …; a channel's own
    refusal is a ``PauseAnswererError`` with its words). ``pause`` is ``None`` when unknown."""

    pause: PauseView | None
    error: CountersignError

    @property
    def code(self) -> str:
        return self.error.code

    def __repr__(self) -> str:
        return f"Refused(code={self.error.code!r})"


AnswerOutcome = Answered | ApprovalCounted | ReplyKept | NotUnderstood | AlreadyClosed | Refused
"""What became of an answer (``App.answer``); match it exhaustively."""
