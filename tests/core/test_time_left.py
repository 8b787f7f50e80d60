"""Time left and the order of waiting questions, as every channel shows them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.time_left import expiring_first, parse_instant, time_left_text


def test_time_left_reads_as_a_person_says_it() -> None:
    assert time_left_text(timedelta(hours=3, minutes=20)) == "3 h 20 min"
    assert time_left_text(timedelta(hours=2)) == "2 h"
    assert time_left_text(timedelta(minutes=12, seconds=59)) == "12 min"
    assert time_left_text(timedelta(seconds=59)) == "under a minute"
    assert time_left_text(timedelta(minutes=-5)) == "under a minute"  # already due


def test_an_instant_without_a_zone_is_utc_and_garbage_is_none() -> None:
    assert parse_instant("2026-03-01T09:00:00") == datetime(2026, 3, 1, 9, tzinfo=UTC)
    assert parse_instant("2026-03-01T10:00:00+01:00") == datetime(2026, 3, 1, 9, tzinfo=UTC)
    assert parse_instant("yesterday") is None


def test_what_expires_first_is_on_top_then_the_newest_then_the_unreadable() -> None:
    items = {
        "old, never expires": (None, "2026-03-01T08:00:00+00:00"),
        "expires later": ("2026-03-02T09:00:00+00:00", "2026-03-01T07:00:00+00:00"),
        "unreadable": (None, "?"),
        "new, never expires": (None, "2026-03-01T09:00:00+00:00"),
        "expires soon": ("2026-03-01T10:00:00+00:00", "2026-03-01T06:00:00+00:00"),
    }
    ordered = sorted(items, key=lambda name: expiring_first(*items[name]))
    assert ordered == [
        "expires soon",
        "expires later",
        "new, never expires",
        "old, never expires",
        "unreadable",
    ]
