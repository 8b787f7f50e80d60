"""Time on a question, for a person: how long is left, and what happened while it waited.

Pure functions of the question as the App shows it and of ``now`` (the App's clock): the pages
and the inbox say the same thing in the same words.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core.time_left import parse_instant, time_left_text
from channels.web.notify import when


@dataclass(frozen=True, slots=True, kw_only=True)
class Waiting:
    """How a waiting question stands in time."""

    expires_at: datetime | None
    now: datetime
    reminded: int
    escalated: bool

    @classmethod
    def of(
        cls, expires_at: str | None, *, now: datetime, reminded: int, escalated: bool
    ) -> Waiting:
        return cls(
            expires_at=parse_instant(expires_at) if expires_at else None,
            now=now,
            reminded=reminded,
            escalated=escalated,
        )

    @property
    def time_left(self) -> timedelta | None:
        return None if self.expires_at is None else self.expires_at - self.now

    def left_text(self) -> str:
        """``3 h 20 min left``; empty when it never expires."""
        left = self.time_left
        return "" if left is None else f"{time_left_text(left)} left"

    def reminded_text(self) -> str:
        """``reminded 2 times``; empty before the first reminder."""
        if self.reminded <= 0:
            return ""
        return "reminded once" if self.reminded == 1 else f"reminded {self.reminded} times"

    def summary(self) -> str:
        """One line for the question's page: the expiry, the reminders, the escalation."""
        parts = []
        if self.expires_at is not None:
            parts.append(f"Expires {when(self.expires_at)} ({self.left_text()}) if nobody answers.")
        said = [s for s in (self.reminded_text(), "escalated" if self.escalated else "") if s]
        if said:
            parts.append(f"{' and '.join(said).capitalize()}.")
        return " ".join(parts)
