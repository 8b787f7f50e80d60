"""Time on a question: when to remind, escalate, and when nobody answering ends it.

``PauseTiming`` goes on a role (``@channel_role(..., timing=...)``) and can be overridden per
tool (``@tool(..., timing=...)``). Durations count from when the question was asked, on the
App's clock. Expiry is its own resolution (``PauseResolution.EXPIRED``): nobody answering is
never a rejection by a person.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta


class OnExpiry(enum.Enum):
    """What the waiting step gets when its question expires."""

    TOOL_ERROR = "tool-error"
    """The model reads a tool error saying nobody approved the call in time (and when)."""
    FAIL = "fail"
    """The step fails with ``PauseExpiredError``."""


class Nudge(enum.Enum):
    """What the sweep sends a question still waiting: a reminder or its escalation."""

    REMIND = "remind"
    ESCALATE = "escalate"


@dataclass(frozen=True, slots=True, kw_only=True)
class PauseTiming:
    """Every field optional; the assembly checks that they make sense together
    (``[timing.*]`` rules)."""

    remind_after: timedelta | None = None
    remind_every: timedelta | None = None
    escalate_after: timedelta | None = None
    expire_after: timedelta | None = None
    on_expiry: OnExpiry = OnExpiry.TOOL_ERROR

    def problems(self) -> list[tuple[str, str]]:
        """The rules this timing breaks, as (rule, what is wrong)."""
        found: list[tuple[str, str]] = []
        durations = {
            "remind_after": self.remind_after,
            "remind_every": self.remind_every,
            "escalate_after": self.escalate_after,
            "expire_after": self.expire_after,
        }
        for name, value in durations.items():
            if value is not None and value <= timedelta(0):
                found.append(("timing.positive", f"{name} must be longer than zero"))
        if self.remind_every is not None and self.remind_after is None:
            found.append(("timing.remind-every", "remind_every needs remind_after"))
        if self.expire_after is not None:
            for name in ("remind_after", "escalate_after"):
                value = durations[name]
                if value is not None and value >= self.expire_after:
                    found.append(
                        (
                            "timing.after-expiry",
                            f"{name} ({value}) is not before expire_after ({self.expire_after})",
                        )
                    )
        return found

    def expires_at(self, asked_at: datetime) -> datetime | None:
        return None if self.expire_after is None else asked_at + self.expire_after

    def next_nudge_at(
        self, asked_at: datetime, *, after: datetime | None, escalated: bool
    ) -> datetime | None:
        """When the next reminder or escalation is due: the first reminder slot strictly after
        ``after`` (None: the first slot), the escalation if not sent yet; None if neither comes
        before the expiry. Slots missed while nobody swept (a clock that jumps) are one
        reminder, not a burst."""
        moments = [self._next_reminder_at(asked_at, after)]
        if not escalated and self.escalate_after is not None:
            moments.append(asked_at + self.escalate_after)
        expires_at = self.expires_at(asked_at)
        due = [m for m in moments if m is not None and (expires_at is None or m < expires_at)]
        return min(due, default=None)

    def due_nudges(
        self, asked_at: datetime, *, due_at: datetime, now: datetime, escalated: bool
    ) -> tuple[Nudge, ...]:
        """What the sweep sends at ``now`` for the nudge that fell due at ``due_at`` (the
        pause's ``nudge_at``), in the order their moments came: the reminder whose slot has
        come (the first slot at or after ``due_at``) and the escalation, if not sent yet. Both
        when both have come: a reminder slot at the escalation's moment (remind every hour,
        escalate at 3 h) is a reminder too, sent first, to whom the reminders went until then.
        Nothing at or after the expiry."""
        expires_at = self.expires_at(asked_at)
        if expires_at is not None and now >= expires_at:
            return ()
        due: list[tuple[datetime, int, Nudge]] = []
        reminder_at = self._first_reminder_from(asked_at, due_at)
        if reminder_at is not None and reminder_at <= now:
            due.append((reminder_at, 0, Nudge.REMIND))
        if not escalated and self.escalate_after is not None:
            escalation_at = asked_at + self.escalate_after
            if escalation_at <= now:
                due.append((escalation_at, 1, Nudge.ESCALATE))
        return tuple(nudge for _, _, nudge in sorted(due))

    def due_nudge(self, asked_at: datetime, *, now: datetime, escalated: bool) -> Nudge | None:
        """What kind of nudge is due at ``now``: the escalation first (it asks again anyway),
        else a reminder; nothing at or after the expiry. (The sweep asks ``due_nudges``, which
        also sends a reminder that falls at the escalation's moment.)"""
        expires_at = self.expires_at(asked_at)
        if expires_at is not None and now >= expires_at:
            return None
        escalate_after = self.escalate_after
        if not escalated and escalate_after is not None and asked_at + escalate_after <= now:
            return Nudge.ESCALATE
        if self.remind_after is not None and asked_at + self.remind_after <= now:
            return Nudge.REMIND
        return None

    def _first_reminder_from(self, asked_at: datetime, since: datetime) -> datetime | None:
        """The first reminder slot at or after ``since``, if there is one."""
        if self.remind_after is None:
            return None
        first = asked_at + self.remind_after
        if first >= since:
            return first
        if self.remind_every is None:
            return None
        return first - ((first - since) // self.remind_every) * self.remind_every  # rounded up

    def _next_reminder_at(self, asked_at: datetime, after: datetime | None) -> datetime | None:
        if self.remind_after is None:
            return None
        first = asked_at + self.remind_after
        if after is None or first > after:
            return first
        if self.remind_every is None:
            return None
        return first + ((after - first) // self.remind_every + 1) * self.remind_every
