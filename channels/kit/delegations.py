"""A person's standing delegations as every channel lists them, and a new one checked before
it is made (``App.delegate``): the same lines and the same refusals on Slack's App Home and
the web inbox.

Only a delegation's delegator may end it early from a channel: a delegate (or anyone else)
who sends its id is refused, nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from bot.core.delegations import Delegation
from channels.kit.answerers import Among
from channels.kit.catalog import Implementation
from channels.kit.texts import (
    DELEGATE_MISSING,
    DELEGATE_UNKNOWN,
    DELEGATE_YOURSELF,
    DELEGATION_END_MISSING,
    DELEGATION_END_PAST,
    NO_ROLES,
    hands_to_you,
    you_hand_to,
)

DELEGATE_FIELD: Final = "to"
"""The field naming who a new delegation hands the questions to."""
UNTIL_FIELD: Final = "until"
"""The field saying when it ends."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DelegationLine:
    """One active delegation of a person: theirs (``own``: they hand their questions on and
    may end it) or to them."""

    delegation: Delegation
    own: bool

    def said(self, person: Callable[[str], str], date: Callable[[datetime], str]) -> str:
        """The line, people and the date written by the channel."""
        until = date(self.delegation.ends_at)
        if self.own:
            return you_hand_to(person(self.delegation.delegate), until)
        return hands_to_you(person(self.delegation.delegator), until)


def delegation_lines(
    delegations: Sequence[Delegation], person: str, now: datetime
) -> list[DelegationLine]:
    """``person``'s active delegations: theirs first, then those to them, each soonest end
    first."""
    active = sorted(
        (d for d in delegations if d.is_active(now)), key=lambda d: (d.ends_at, d.delegation_id)
    )
    own = [DelegationLine(delegation=d, own=True) for d in active if d.delegator == person]
    theirs = [DelegationLine(delegation=d, own=False) for d in active if d.delegate == person]
    return own + theirs


def ending_refused(delegation: Delegation | None, person: str) -> bool:
    """Whether ``person`` may not end ``delegation`` (unknown, or not theirs)."""
    return delegation is None or delegation.delegator != person


def new_delegation_problems(
    *,
    delegator: str,
    delegate: str | None,
    ends_at: datetime | None,
    now: datetime,
    known: Callable[[str], bool] | None = None,
) -> dict[str, str]:
    """What is wrong with a new delegation, by field (empty: it may be made): nobody named,
    the person themself, someone ``known`` says is not there, an end missing or past."""
    problems: dict[str, str] = {}
    if not delegate:
        problems[DELEGATE_FIELD] = DELEGATE_MISSING
    elif delegate == delegator:
        problems[DELEGATE_FIELD] = DELEGATE_YOURSELF
    elif known is not None and not known(delegate):
        problems[DELEGATE_FIELD] = DELEGATE_UNKNOWN
    if ends_at is None:
        problems[UNTIL_FIELD] = DELEGATION_END_MISSING
    elif ends_at <= now:
        problems[UNTIL_FIELD] = DELEGATION_END_PAST
    return problems


async def delegated_roles(
    implementations: Sequence[Implementation[Any]], among: Among
) -> list[str]:
    """The roles whose questions a delegation hands on: those its delegator answers by the
    channel's rule (``among``: whether the delegator is among these approvers), by name."""
    roles = {i.config.role for i in implementations if await among(i.config.approvers)}
    return sorted(roles)


def roles_said(roles: Sequence[str]) -> str:
    """The roles, for a person (``NO_ROLES`` when none)."""
    return ", ".join(roles) if roles else NO_ROLES
