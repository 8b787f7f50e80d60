"""How a waiting pause closes: a closed union, one verb (``close``) for all of them.

Each closing says what the pause becomes (``closed_as``: its status and resolution), in one
exhaustive ``match``: a new way to close (a deadline that expires) is one more class here and one
more arm there, and the type checker points at every other ``match`` that must learn it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_never

from bot.core.enums import PauseResolution, PauseStatus
from bot.store.records import PauseAnswer


@dataclass(frozen=True, slots=True, kw_only=True)
class Replied:
    """Someone answered: PENDING → RESOLVED (REPLIED), for a pass to take — only while the
    deadline the pause waits under (``closes_at``) has not passed. (Named for its resolution,
    as each closing here is: ``bot.core.answers.Answered`` is what ``App.answer`` returns.)"""

    answer: PauseAnswer
    audit_decision: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DecidedAtOnce:
    """The channel decided as it was asked: PENDING → TAKEN (DECIDED); ``ran_with`` (masked) is
    what the approved tool is about to run with, for the audit entry."""

    answer: PauseAnswer
    audit_decision: dict[str, Any] | None = None
    ran_with: dict[str, Any] | None = None
    grant_id: str | None = None
    """Decided by this standing grant: its use is counted in the same transaction that closes
    the pause (``GrantUnavailable``, nothing written, when it has no use left)."""


class GrantUnavailable(Exception):
    """The grant a closing names was revoked, expired or used up meanwhile: nothing was
    written (the pause still waits; try another grant, or ask a person)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Withdrawn:
    """The question no longer needs an answer (its branch stopped, its quorum was reached or its
    deadline passed): PENDING → CANCELLED (WITHDRAWN)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancelled:
    """The execution was cancelled or ended: PENDING → CANCELLED (CANCELLED)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Expired:
    """Nobody answered before the question's expiry: PENDING → CANCELLED (EXPIRED)."""


Closing = Replied | DecidedAtOnce | Withdrawn | Cancelled | Expired

Answered = Replied
"""The old name of ``Replied``, kept working for code written before the rename."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClosedAs:
    """What a closing makes of a pause, and what its audit entry records."""

    status: PauseStatus
    resolution: PauseResolution
    answer: PauseAnswer | None = None
    audit_decision: dict[str, Any] | None = None
    ran_with: dict[str, Any] | None = None
    before_deadline: bool = False
    """Only while the pause's own deadline (``closes_at``) has not passed."""
    grant_id: str | None = None
    """The grant whose use is counted with the closing (``DecidedAtOnce.grant_id``)."""


def closed_as(closing: Closing) -> ClosedAs:
    """The one place a closing becomes a (status, resolution) pair."""
    match closing:
        case Replied(answer=answer, audit_decision=audit_decision):
            return ClosedAs(
                status=PauseStatus.RESOLVED,
                resolution=PauseResolution.REPLIED,
                answer=answer,
                audit_decision=audit_decision,
                before_deadline=True,
            )
        case DecidedAtOnce(
            answer=answer, audit_decision=audit_decision, ran_with=ran_with, grant_id=grant_id
        ):
            return ClosedAs(
                status=PauseStatus.TAKEN,
                resolution=PauseResolution.DECIDED,
                answer=answer,
                audit_decision=audit_decision,
                ran_with=ran_with,
                grant_id=grant_id,
            )
        case Withdrawn():
            return ClosedAs(status=PauseStatus.CANCELLED, resolution=PauseResolution.WITHDRAWN)
        case Cancelled():
            return ClosedAs(status=PauseStatus.CANCELLED, resolution=PauseResolution.CANCELLED)
        case Expired():
            return ClosedAs(status=PauseStatus.CANCELLED, resolution=PauseResolution.EXPIRED)
        case _:
            assert_never(closing)
