"""The Slack state's stores, the same on each backend: a SQLite file (worker threads), in-memory
SQLite (the bot's own database) and PostgreSQL (the App's async engine); Slack's messages on the
store's message references (SQLite, PostgreSQL, in memory)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Connection, func, insert, select

from bot.store.database import Database
from bot.store.memory import MemoryMessageRefs
from bot.store.message_refs import SqlMessageRefs
from bot.store.migrations import apply_migrations
from bot.testing import FakeClock
from channels.slack.database import SlackDatabase
from channels.slack.schema import SLACK_MIGRATIONS, seen_events, slack_schema_version
from channels.slack.store import MessageRef, SeenEvents, SlackMessageStore
from tests.databases import BACKENDS as DATABASES
from tests.databases import STORE_BACKENDS, database, postgres_database
from tests.store.test_migrations import make_v3, slack_row

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


@pytest.fixture(params=STORE_BACKENDS)
async def messages(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[SlackMessageStore]:
    """Slack's messages on each of the store's message references."""
    if request.param == "memory":
        yield SlackMessageStore(MemoryMessageRefs())
        return
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(FakeClock().now())
        yield SlackMessageStore(SqlMessageRefs(opened))


async def test_message_references(messages: SlackMessageStore) -> None:
    at = FakeClock().now()

    assert await messages.add(ref("a" * 32, "1.1"), at)
    assert not await messages.add(ref("a" * 32, "9.9"), at)  # kept as it was
    assert await messages.add(ref("b" * 32, "2.2", thread_ts="1.1"), at)

    assert await messages.get("a" * 32) == ref("a" * 32, "1.1")
    assert await messages.get("b" * 32) == ref("b" * 32, "2.2", thread_ts="1.1")
    assert await messages.get("c" * 32) is None
    assert {r.ts for r in await messages.open_in_thread("C0APPROVALS", "1.1")} == {"1.1", "2.2"}
    assert await messages.open_in_thread("C0APPROVALS", "2.2") == []  # no thread starts there
    assert await messages.close("a" * 32, at)
    assert not await messages.close("a" * 32, at)
    assert await messages.get("a" * 32) == replace(ref("a" * 32, "1.1"), closed=True)
    assert [r.ts for r in await messages.open_in_thread("C0APPROVALS", "1.1")] == ["2.2"]


async def test_slack_s_references_of_an_earlier_version_are_found_as_they_were(
    tmp_path: Path,
) -> None:
    """A database made by v3 (Slack's references in ``cs_slack_messages``), migrated."""
    rows = [
        slack_row("a", "1.1"),
        slack_row("b", "1.2", thread_ts="1.1"),
        slack_row("c", "2.1", closed=True),
    ]
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'v3.db'}") as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(make_v3, rows)
        await opened.migrate(FakeClock().now())
        messages = SlackMessageStore(SqlMessageRefs(opened))

        for row in rows:
            found = await messages.get(row["pause_id"])
            assert found == MessageRef(**{k: row[k] for k in MESSAGE_REF_FIELDS})
        in_thread = await messages.open_in_thread("C0APPROVALS", "1.1")
    assert [r.ts for r in in_thread] == ["1.1", "1.2"]


MESSAGE_REF_FIELDS = (
    "pause_id",
    "tenant_id",
    "channel_id",
    "ts",
    "thread_ts",
    "role",
    "implementation",
    "closed",
)


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


@pytest.mark.parametrize("kind", DATABASES)
async def test_seen_events_of_an_earlier_version_are_kept(kind: str, tmp_path: Path) -> None:
    """Up to the App's schema v3 ``cs_slack_events`` was the App's: Slack's v2 keeps it."""
    clock = FakeClock()

    def made_by_v3(connection: Connection) -> None:
        apply_migrations(connection, slack_schema_version, SLACK_MIGRATIONS[:1], clock.now())
        seen_events.create(connection)
        connection.execute(insert(seen_events).values(event_id="Ev0SEEN", seen_at=clock.now()))

    async with database(kind, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(clock.now())
        async with opened.engine.begin() as connection:
            await connection.run_sync(made_by_v3)
        slack = SlackDatabase.open(opened, clock)
        try:
            seen = SeenEvents(slack)
            assert not await seen.first_time("Ev0SEEN", clock.now())
            assert await seen.first_time("Ev0NEW", clock.now())
        finally:
            await slack.close()
        async with opened.engine.connect() as connection:
            version = await connection.run_sync(
                lambda c: c.execute(select(func.max(slack_schema_version.c.version))).scalar()
            )
    assert version == len(SLACK_MIGRATIONS) == 2


async def test_a_question_and_its_escalated_copy_are_read_and_closed_together(
    messages: SlackMessageStore,
) -> None:
    at = FakeClock().now()
    question = replace(ref("a" * 32, "1.1"), noted=True)
    copy = replace(ref("a" * 32, "5.5"), escalated_copy=True)
    assert await messages.add(question, at) and await messages.add(copy, at)
    assert await messages.add(replace(ref("b" * 32, "2.2"), noted=False), at)

    assert await messages.copies("a" * 32) == [question, copy]  # the question first
    assert await messages.close("a" * 32, at)
    assert not await messages.close("a" * 32, at)  # once
    assert [r.closed for r in await messages.copies("a" * 32)] == [True, True]
    assert [r.noted for r in await messages.copies("a" * 32)] == [True, None]
    other = await messages.get("b" * 32)
    assert other is not None and other.noted is False and not other.closed
