"""How people read the time a waiting question has left, and in which order waiting questions
are listed: the same words and the same order in every channel (Slack's ``/pending`` and Home
tab, the web inbox)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def parse_instant(iso: str) -> datetime | None:
    """The time of an ISO 8601 string (a naive one is taken as UTC); None if unreadable."""
    try:
        parsed = datetime.fromisoformat(iso)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def time_left_text(left: timedelta) -> str:
    """Time left, for a person: "3 h 20 min", "12 min", "under a minute"."""
    minutes = max(int(left.total_seconds()) // 60, 0)
    if minutes == 0:
        return "under a minute"
    hours, minutes = divmod(minutes, 60)
    if hours == 0:
        return f"{minutes} min"
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def expiring_first(expires_at: str | None, asked_at: str) -> tuple[int, float]:
    """A sort key for waiting questions: what expires first at the top (soonest first), then
    the rest by ``asked_at``, newest first; unreadable times last."""
    expires = None if expires_at is None else parse_instant(expires_at)
    if expires is not None:
        return (0, expires.timestamp())
    asked = parse_instant(asked_at)
    return (1, -asked.timestamp()) if asked is not None else (2, 0.0)
