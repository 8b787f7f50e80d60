"""The Slack state's stores, the same on each backend: a SQLite file (worker threads), in-memory
SQLite (the bot's own database) and PostgreSQL (the App's async engine)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.store.database import Database
from bot.testing import FakeClock
from channels.slack.database import SlackDatabase
from channels.slack.store import MessageRef, SeenEvents, SlackMessageStore
from tests.databases import postgres_database

BACKENDS = [
    pytest.param("file", id="sqlite-file"),
    pytest.param("memory", id="sqlite-memory"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(params=BACKENDS)
async def slack_db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SlackDatabase]:
    clock = FakeClock()
    if request.param == "postgres":
        async with postgres_database() as url:
            async for opened in _opened(url, clock):
                yield opened
    else:
        path = tmp_path / "countersign.db" if request.param == "file" else ":memory:"
        async for opened in _opened(f"sqlite+aiosqlite:///{path}", clock):
            yield opened


async def _opened(url: str, clock: FakeClock) -> AsyncIterator[SlackDatabase]:
    async with Database.open(url) as app_database:
        await app_database.migrate(clock.now())
        database = SlackDatabase.open(app_database, clock)
        try:
            yield database
        finally:
            await database.close()


def ref(pause_id: str, ts: str, *, thread_ts: str | None = None) -> MessageRef:
    return MessageRef(
        pause_id=pause_id,
        tenant_id="T0TEAM",
        channel_id="C0APPROVALS",
        ts=ts,
        thread_ts=thread_ts,
        role="approvers",
        implementation="slack",
    )


async def test_message_references(slack_db: SlackDatabase) -> None:
    messages, at = SlackMessageStore(slack_db), FakeClock().now()

    assert await messages.add(ref("a" * 32, "1.1"), at)
    assert not await messages.add(ref("a" * 32, "9.9"), at)  # kept as it was
    assert await messages.add(ref("b" * 32, "2.2", thread_ts="1.1"), at)

    found = await messages.get("a" * 32)
    assert found is not None and found.ts == "1.1"
    assert await messages.get("c" * 32) is None
    assert {r.ts for r in await messages.open_in_thread("C0APPROVALS", "1.1")} == {"1.1", "2.2"}
    assert await messages.close("a" * 32, at)
    assert not await messages.close("a" * 32, at)
    assert [r.ts for r in await messages.open_of_tenant("T0TEAM")] == ["2.2"]


async def test_an_event_is_seen_first_exactly_once_even_when_its_deliveries_race(
    slack_db: SlackDatabase,
) -> None:
    seen, clock = SeenEvents(slack_db), FakeClock()

    firsts = await asyncio.gather(*(seen.first_time("Ev0RACE", clock.now()) for _ in range(8)))

    assert sorted(firsts) == [False] * 7 + [True]
    assert await seen.first_time("Ev0OTHER", clock.now())


async def test_seen_events_older_than_the_cut_are_pruned(slack_db: SlackDatabase) -> None:
    seen, clock = SeenEvents(slack_db), FakeClock()
    assert await seen.first_time("Ev0OLD", clock.now())
    await clock.advance(timedelta(hours=2))
    assert await seen.first_time("Ev0NEW", clock.now())

    assert await seen.prune(clock.now() - timedelta(hours=1)) == 1

    assert await seen.first_time("Ev0OLD", clock.now())
    assert not await seen.first_time("Ev0NEW", clock.now())
