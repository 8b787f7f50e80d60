"""How a question ended, once for every channel: a closed union read from the pause, and the
words a person reads about it.

``outcome_of(pause)`` is the outcome (``None`` while it waits); ``words_of(outcome)`` is what
is said of it, in parts a channel marks up its own way (Slack bolds ``lead`` and mentions
``by``; the web writes the sentence, ``sentence``). Each kind has a ``tone`` of its own, so
approved, rejected, answered instead, expired, withdrawn and cancelled never look alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, assert_never

from bot.core.enums import PauseResolution, PauseStatus
from bot.core.results import PauseView
from channels.kit.texts import approvals_given, people

Tone = Literal["approved", "rejected", "responded", "expired", "withdrawn", "cancelled"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Approved:
    """Approved by ``by``; ``overrides`` are the edited arguments, if any.

    ``read_as`` is the free-text reply the approval was read from, when it came from one.
    ``approvers`` (a question that needed several approvals) is everyone whose approval
    counted, oldest first, ``by`` last; ``required`` how many it needed.
    """

    by: str
    overrides: Mapping[str, Any] | None = None
    read_as: str | None = None
    approvers: tuple[str, ...] = ()
    required: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejected:
    """Rejected by ``by``, with an optional reason; ``read_as`` as for :class:`Approved`."""

    by: str
    reason: str | None = None
    read_as: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Responded:
    """Answered by ``by`` in place of the tool (the tool did not run): ``response`` is what the
    asker reads instead of its result."""

    by: str
    response: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DecidedAtOnce:
    """Decided without asking anybody (e.g. by a policy), approved or rejected."""

    approved: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Withdrawn:
    """The agent no longer needs the answer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancelled:
    """The run was cancelled; ``by`` when someone stopped it (an agent session's Stop)."""

    by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Expired:
    """Nobody answered before the question's expiry (not a rejection)."""


Outcome: TypeAlias = (
    Approved | Rejected | Responded | DecidedAtOnce | Withdrawn | Cancelled | Expired
)


def outcome_of(pause: PauseView, *, read_as: str | None = None) -> Outcome | None:
    """How ``pause`` was resolved, ``None`` while it still waits.

    ``read_as`` is the free-text reply the answer was read from, when it came from one.
    """
    match pause.status:
        case PauseStatus.PENDING:
            return None
        case PauseStatus.CANCELLED:
            return closed_resolution(pause.resolution or PauseResolution.CANCELLED)
        case PauseStatus.RESOLVED | PauseStatus.TAKEN:
            return _answered(pause, read_as)
        case _:
            assert_never(pause.status)


def _answered(pause: PauseView, read_as: str | None) -> Outcome:
    decision = pause.decision
    approved = decision is not None and decision.approved
    reason = None if decision is None else decision.reason
    read_as = read_as if read_as is not None else pause.reply
    if pause.resolution is PauseResolution.DECIDED or pause.responder is None:
        return DecidedAtOnce(approved=approved, reason=reason)
    if approved:
        assert decision is not None
        return Approved(
            by=pause.responder,
            overrides=decision.override_arguments,
            read_as=read_as,
            approvers=_approvers(pause, pause.responder),
            required=pause.required_approvals,
        )
    if decision is not None and decision.response is not None:
        return Responded(by=pause.responder, response=decision.response)
    return Rejected(by=pause.responder, reason=reason, read_as=read_as)


def _approvers(pause: PauseView, last: str) -> tuple[str, ...]:
    """Whose approvals closed ``pause`` (one that needed several), oldest first, ``last``
    (who gave the closing one) last; empty for a question one answer closes."""
    if pause.required_approvals <= 1:
        return ()
    earlier = tuple(dict.fromkeys(a.by for a in pause.approvals if a.counted and a.by != last))
    return (*earlier, last)


def closed_resolution(resolution: PauseResolution, *, by: str | None = None) -> Outcome:
    """What a withdrawal shows (``by``: who stopped the run); a resolution that answers the
    pause is no withdrawal."""
    match resolution:
        case PauseResolution.WITHDRAWN:
            return Withdrawn()
        case PauseResolution.CANCELLED:
            return Cancelled(by=by)
        case PauseResolution.EXPIRED:
            return Expired()
        case PauseResolution.REPLIED | PauseResolution.DECIDED:
            raise ValueError(f"a pause closed {resolution} was answered, not withdrawn")
        case _:
            assert_never(resolution)


def verdict(outcome: Outcome) -> str:
    """One word for how a reply was read."""
    match outcome:
        case Approved():
            return "approve"
        case Rejected():
            return "reject"
        case Responded():
            return "respond"
        case DecidedAtOnce(approved=approved):
            return "approve" if approved else "reject"
        case Withdrawn() | Cancelled() | Expired():
            return "no answer"
        case _:
            assert_never(outcome)


@dataclass(frozen=True, slots=True, kw_only=True)
class OutcomeWords:
    """What is said of an outcome, in parts: ``lead`` ("Approved with changes"), ``by`` (who
    answered, as the channel names them), ``quote`` (their own words: a reason, an answer in
    place of the tool) or ``note`` (our explanation: "nobody answered in time").

    A question that needed several approvals names every approver: ``with_`` are the ones
    before ``by`` (oldest first) and ``tally`` how many of how many ("2 of 2")."""

    tone: Tone
    lead: str
    by: str | None = None
    quote: str | None = None
    note: str = ""
    with_: tuple[str, ...] = ()
    tally: str = ""

    def credit(self, name: Callable[[str], str] = str) -> str:
        """Who answered, after the lead: " by ann and bob · 2 of 2" ("" when nobody did);
        ``name`` writes a person (Slack: a mention)."""
        if not self.by:
            return ""
        said = f" by {people([name(who) for who in (*self.with_, self.by)])}"
        return f"{said} · {self.tally}" if self.tally else said

    def sentence(self, name: Callable[[str], str] = str) -> str:
        """The outcome as one plain sentence; ``name`` writes who answered (``you``)."""
        said = self.lead + self.credit(name)
        if self.quote:
            return f"{said}: {self.quote}"
        return f"{said}: {self.note}." if self.note else f"{said}."

    def summary(self, name: Callable[[str], str] = str) -> str:
        """The sentence's start, lower case, without the person's words (a fallback text)."""
        said = self.lead[:1].lower() + self.lead[1:] + self.credit(name)
        return f"{said}: {self.note}" if self.note else said


def words_of(outcome: Outcome) -> OutcomeWords:
    """What is said of ``outcome`` (see :class:`OutcomeWords`)."""
    match outcome:
        case Approved(by=by, overrides=overrides, approvers=approvers, required=required):
            lead = "Approved with changes" if overrides else "Approved"
            several = len(approvers) > 1
            return OutcomeWords(
                tone="approved",
                lead=lead,
                by=by,
                with_=approvers[:-1] if several else (),
                tally=approvals_given(len(approvers), required) if several else "",
            )
        case Rejected(by=by, reason=reason):
            return OutcomeWords(tone="rejected", lead="Rejected", by=by, quote=_words(reason))
        case Responded(by=by, response=response):
            return OutcomeWords(
                tone="responded", lead="Answered instead of the tool", by=by, quote=response
            )
        case DecidedAtOnce(approved=approved, reason=reason):
            verdict_ = "approved" if approved else "rejected"
            return OutcomeWords(
                tone="approved" if approved else "rejected",
                lead=f"Decided at once: {verdict_}",
                quote=_words(reason),
            )
        case Withdrawn():
            return OutcomeWords(tone="withdrawn", lead="No longer needed")
        case Cancelled(by=by) if by:
            return OutcomeWords(tone="cancelled", lead="Stopped", by=by)
        case Cancelled():
            return OutcomeWords(tone="cancelled", lead="Cancelled")
        case Expired():
            return OutcomeWords(tone="expired", lead="Expired", note="nobody answered in time")
        case _:
            assert_never(outcome)


def _words(text: str | None) -> str | None:
    return text.strip() or None if text else None
