"""The memory of waiting pauses a process last wrote (``bot.store.recent_pauses``): only waiting
ones that carry their row's version, each taken once, for its own tenant, bounded in number and
in age."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from bot.core.enums import PauseStatus
from bot.store.memory import MemoryStore
from bot.store.recent_pauses import RecentPauses
from bot.store.records import PauseRecord, changed
from tests.store.test_contract import new_pause


def record(
    key: str, *, version: int | None = 7, status: PauseStatus = PauseStatus.PENDING
) -> PauseRecord:
    """A pause as the memory store asks it, with the row version and status given."""
    asked = asyncio.run(MemoryStore().get_or_create(new_pause(key)))
    return changed(asked, row_version=version, status=status)


def test_only_waiting_pauses_with_their_rows_version_are_kept_and_each_is_taken_once() -> None:
    recent = RecentPauses()
    waiting, unversioned = record("a"), record("b", version=None)
    resolved = record("c", status=PauseStatus.RESOLVED)
    recent.keep([waiting, unversioned, resolved])
    assert len(recent) == 1
    assert recent.take("other-tenant", waiting.pause_id) is None  # kept for its own tenant
    assert recent.take(waiting.tenant_id, waiting.pause_id) is waiting
    assert recent.take(waiting.tenant_id, waiting.pause_id) is None


def test_a_pause_that_no_longer_waits_is_forgotten_when_a_write_says_so() -> None:
    recent = RecentPauses()
    waiting = record("a")
    recent.keep([waiting])
    recent.keep([replace(waiting, status=PauseStatus.RESOLVED)])
    assert recent.take(waiting.tenant_id, waiting.pause_id) is None


def test_the_oldest_go_first_past_the_limit_and_none_is_given_past_its_age() -> None:
    now = [0.0]
    recent = RecentPauses(limit=2, max_age=60.0, clock=lambda: now[0])
    first, second, third = record("a"), record("b"), record("c")
    recent.keep([first, second])
    recent.keep([third])
    assert len(recent) == 2 and recent.take(first.tenant_id, first.pause_id) is None
    now[0] = 61.0
    assert recent.take(second.tenant_id, second.pause_id) is None  # too old: read instead
    assert len(recent) == 1
