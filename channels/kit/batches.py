"""Several waiting questions answered at once (``App.answer_all``), for every channel: which
questions a person may put in a batch, and what the batch did to each, in the kit's words.

A batch approves or rejects (one reason each records): a question goes in only while it waits
and takes both answers. Each item settles its own pause; what became of it is one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, assert_never

from bot.core.answers import (
    AlreadyClosed,
    Answered,
    AnswerOutcome,
    ApprovalCounted,
    NotUnderstood,
    Refused,
    ReplyKept,
)
from channels.kit.offers import Offered
from channels.kit.question import QuestionView
from channels.kit.said import closed_sentence, refusal_text, said_of
from channels.kit.texts import (
    BATCH_APPROVED,
    BATCH_REJECTED,
    NO_LONGER_AVAILABLE,
    approval_counted,
    batch_refused,
    batch_skipped,
)

BatchAction = Literal["approve", "reject"]
Tone = Literal["ok", "skipped", "bad"]


def may_batch(question: QuestionView) -> bool:
    """Whether ``question`` may go in a batch: it waits and takes an approval and a rejection
    (an asker that takes fewer is answered on its own page or message)."""
    return question.waiting and batchable(question.offers)


def batchable(offers: Offered) -> bool:
    """Whether a waiting question offering ``offers`` may go in a batch."""
    return offers.approve and offers.reject


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchLine:
    """What a batch did to one question: its title and one sentence."""

    title: str
    text: str
    tone: Tone


def batch_line(
    outcome: AnswerOutcome,
    action: BatchAction,
    *,
    title: str,
    name: Callable[[str], str] = str,
) -> BatchLine:
    """The line for one item of a batch answered by ``action``; ``name`` writes who answered
    an item that closed before the batch reached it."""
    match outcome:
        case Answered():
            done = BATCH_APPROVED if action == "approve" else BATCH_REJECTED
            return BatchLine(title=title, text=done, tone="ok")
        case ApprovalCounted(still_needed=still_needed):
            return BatchLine(title=title, text=approval_counted(still_needed), tone="ok")
        case AlreadyClosed(pause=pause):
            how = closed_sentence(pause, name=name)
            return BatchLine(title=title, text=batch_skipped(how), tone="skipped")
        case Refused(pause=pause, error=error):
            why = refusal_text(error, pause=pause, kind=action)
            return BatchLine(title=title, text=batch_refused(why), tone="bad")
        case NotUnderstood() | ReplyKept():  # a batch gives a decision, never words
            return BatchLine(title=title, text=said_of(outcome) or NO_LONGER_AVAILABLE, tone="bad")
        case _:
            assert_never(outcome)


def batch_lines(
    outcomes: Sequence[AnswerOutcome],
    action: BatchAction,
    *,
    title: Callable[[AnswerOutcome], str],
    name: Callable[[str], str] = str,
) -> list[BatchLine]:
    """One line per item, in the order answered."""
    return [batch_line(o, action, title=title(o), name=name) for o in outcomes]
