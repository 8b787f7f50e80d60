"""What a person is told about their answer, from what ``App.answer`` returned: one mapping of
the closed union (and of the runtime's refusals) onto the kit's sentences, for every channel.

A channel adds its markup and its own hints (Slack the words a thread reply is read by); it
never words a refusal of its own. ``kind`` is the kind of answer given (``approve``, ``edit``,
…), so that an answer the question does not take is told what it takes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

from bot.core.answers import (
    AlreadyClosed,
    Answered,
    AnswerOutcome,
    ApprovalCounted,
    NotUnderstood,
    Refused,
    ReplyKept,
)
from bot.core.errors import (
    AlreadyApprovedError,
    CountersignError,
    DtoValidationError,
    PauseAnswererError,
    ProposalChangedError,
    ReplyInterpreterMissingError,
    SelfApprovalError,
    ThreadOwnerError,
    UnknownPauseError,
)
from bot.core.results import PauseView
from channels.kit.offers import not_offered, offered
from channels.kit.outcomes import outcome_of, words_of
from channels.kit.texts import (
    ALREADY_APPROVED,
    APPROVERS_NOT_CHECKED,
    NO_LONGER_AVAILABLE,
    NO_WORDS_TAKEN,
    NOT_AN_APPROVER,
    NOT_ESCALATED_YET,
    NOT_OFFERED_LEAD,
    NOT_THE_OWNER,
    PROPOSAL_CHANGED,
    SELF_APPROVAL,
    approval_counted,
    not_understood,
)

_OWN_WORDS = frozenset({APPROVERS_NOT_CHECKED, NOT_AN_APPROVER, NOT_ESCALATED_YET, NOT_THE_OWNER})


def said_of(
    outcome: AnswerOutcome, *, kind: str | None = None, name: Callable[[str], str] = str
) -> str:
    """The sentence for ``outcome`` (empty: taken, nothing to say); ``name`` writes who
    answered a question that closed before this answer."""
    match outcome:
        case Answered() | ReplyKept():
            return ""
        case ApprovalCounted(still_needed=still_needed):
            return approval_counted(still_needed)
        case NotUnderstood(reason=reason, error=error):
            if isinstance(error, ReplyInterpreterMissingError):
                return NO_WORDS_TAKEN
            return not_understood(reason)
        case AlreadyClosed(pause=pause):
            return closed_sentence(pause, name=name)
        case Refused(pause=pause, error=error):
            return refusal_text(error, pause=pause, kind=kind)
        case _:
            assert_never(outcome)


def closed_sentence(pause: PauseView, *, name: Callable[[str], str] = str) -> str:
    """How a question that no longer waits closed, as one sentence."""
    outcome = outcome_of(pause)
    return NO_LONGER_AVAILABLE if outcome is None else words_of(outcome).sentence(name)


def refusal_text(
    error: CountersignError, *, pause: PauseView | None = None, kind: str | None = None
) -> str:
    """A refused answer (nothing was recorded), in the kit's words."""
    match error:
        case UnknownPauseError():
            return NO_LONGER_AVAILABLE
        case SelfApprovalError():
            return SELF_APPROVAL
        case AlreadyApprovedError():
            return ALREADY_APPROVED
        case ProposalChangedError():
            return PROPOSAL_CHANGED
        case ThreadOwnerError():
            return NOT_THE_OWNER
        case PauseAnswererError() if _kits_own(error.message):
            return error.message  # a channel's rule, said in the kit's words already
        case PauseAnswererError():
            return NOT_AN_APPROVER
        case ReplyInterpreterMissingError():
            return NO_WORDS_TAKEN
        case DtoValidationError() if (
            pause is not None and kind is not None and not pause.ask.allows_kind(kind)
        ):
            return not_offered(offered(pause.ask, tool_input=pause.tool_input))
        case DtoValidationError():
            return f"That answer could not be used: {error.said()}"
        case _:
            return f"That answer could not be used: {error.message}"


def _kits_own(message: str) -> bool:
    """Whether a channel's refusal is one of the kit's sentences (who may answer, or an answer
    the question does not take)."""
    return message in _OWN_WORDS or message.startswith(NOT_OFFERED_LEAD)
