"""Slack's retries of an event on a SQLite file: handled once, never a 5xx, never a frozen loop."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from channels.slack.database import DEDUP_BUSY_TIMEOUT
from tests.slack.conftest import OWNER_CHANNEL, SlackWorld
from tests.slack.office import OWNER
from tests.slack.stub import BOT_USER


def mention(ts: str) -> dict[str, str]:
    return {
        "type": "app_mention",
        "user": OWNER,
        "text": f"<@{BOT_USER}> any refunds left?",
        "channel": OWNER_CHANNEL,
        "ts": ts,
    }


async def test_an_event_and_its_retries_sent_at_once_are_handled_once(world: SlackWorld) -> None:
    world.llm.then_return("Nothing to do.", "Said twice!")
    event = mention("1700000300.000001")

    responses = await asyncio.gather(
        *(world.event(event, event_id="Ev0RETRIED", retry=retry or None) for retry in range(4))
    )
    await world.settle()

    # a retry that meets the first delivery at work waits for it to be handled: dropped, 200
    assert sorted(r.status for r in responses) == [200, 200, 200, 200]
    [answer] = world.stub.of("chat.postMessage")
    assert answer.payload["text"] == "Nothing to do."
    assert len(world.llm.calls) == 1


@contextmanager
def write_lock_held(world: SlackWorld) -> Iterator[None]:
    """Another writer holds the SQLite file's write lock (as a long transaction would)."""
    database = world.app.database.sqlite_path
    assert database is not None
    other = sqlite3.connect(database, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()


async def test_a_busy_database_answers_503_at_once_and_the_retry_is_handled(
    world: SlackWorld,
) -> None:
    """The dedup insert gives up after ``DEDUP_BUSY_TIMEOUT`` without blocking the loop; the
    event is neither recorded nor handled, so Slack's retry is handled as the first delivery."""
    world.llm.then_return("Nothing to do.")
    event = mention("1700000300.000002")
    assert DEDUP_BUSY_TIMEOUT.total_seconds() < 3  # Slack gives up on a request after 3 s

    with write_lock_held(world):
        sent = asyncio.create_task(world.event(event, event_id="Ev0BUSY"))
        health = await world.http.get("/healthz")  # answered while the insert waits
        assert health.status == 200
        assert not sent.done()
        refused = await sent
    await world.settle()

    assert refused.status == 503
    assert world.stub.of("chat.postMessage") == []

    retried = await world.event(event, event_id="Ev0BUSY", retry=1)
    again = await world.event(event, event_id="Ev0BUSY", retry=2)
    await world.settle()

    assert (retried.status, again.status) == (200, 200)
    [answer] = world.stub.of("chat.postMessage")
    assert answer.payload["text"] == "Nothing to do."


async def test_a_retry_of_an_event_whose_delivery_died_before_its_ack_is_handled(
    world: SlackWorld,
) -> None:
    """The first delivery claimed the event and died (no 200: Slack retries). Its immediate
    retry is answered 503, never 200 (the delivery may still be working, and a 200 would end
    Slack's retries: an event lost if it died); the retry a minute later is handled, and a
    later one is dropped with 200."""
    from datetime import timedelta

    from bot.core.enums import PauseStatus
    from tests.slack.office import MANAGER
    from tests.slack.test_clicks import ask_refund
    from tests.slack.test_messages import FIRST_POST

    pause_id = await ask_refund(world)
    reply = {
        "type": "message",
        "user": MANAGER,
        "text": "approve",
        "channel": "C0APPROVALS",
        "channel_type": "channel",
        "ts": "1700000400.000001",
        "thread_ts": FIRST_POST,
    }
    assert await world.bot.seen_events.first_time("Ev0DIED", world.clock.now())  # then it died

    first_retry = await world.event(reply, event_id="Ev0DIED", retry=1)
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=world.tenant)
    assert first_retry.status == 503 and pause is not None
    assert pause.status is PauseStatus.PENDING  # left for later: the claim is fresh

    await world.clock.advance(timedelta(minutes=1))
    second_retry = await world.event(reply, event_id="Ev0DIED", retry=2)
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=world.tenant)
    assert second_retry.status == 200 and pause is not None
    assert pause.status is PauseStatus.TAKEN
    assert len(world.ledger.runs) == 1

    await world.clock.advance(timedelta(minutes=5))
    third_retry = await world.event(reply, event_id="Ev0DIED", retry=3)
    await world.settle()
    assert third_retry.status == 200
    assert len(world.ledger.runs) == 1
    assert world.stub.of("chat.postEphemeral") == []  # handled once, told nothing twice
