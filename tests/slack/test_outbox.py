"""What the bot says beside its questions is owed until Slack took it (the outbox, issue 24):
a requester's note, its update with the outcome, a "Read X as …" line, a run's end — each said
once after an outage, also by another instance after a restart (a post Slack made without
answering is found, not made again); a hint how to answer is not said once its question
closed; a question whose post hung and that closed unasked loses its buttons."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot import PauseStatus, Settings
from bot.core.errors import ChannelUnavailableError
from channels.kit.question import question_view
from channels.kit.texts import NOT_YET_DELIVERED
from channels.slack.answering import Answering
from channels.slack.nudge_marks import END_EVENT
from channels.slack.outbox import SAID_EVENT, retry_after
from channels.slack.read_lines import READ_LINE, ReadLines
from channels.slack.render import APPROVE_ACTION
from channels.web.render_inbox import InboxEntry, inbox_page
from tests.databases import BACKENDS, TEST_ENCRYPTION_KEYS, database
from tests.slack.checks import assert_sent_valid, buttons
from tests.slack.conftest import OWNER_CHANNEL, SlackWorld, open_world
from tests.slack.office import APPROVALS, MANAGER, STRANGER
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_clicks import ask_refund
from tests.slack.test_lists import pending_of
from tests.slack.test_metrics import scrape, value
from tests.slack.test_notes import THREAD, ask_refund_in_thread
from tests.slack.test_outages_questions import RECOVERED, ask_while_failing

FIRST_POST = "1700000000.000001"
KEYED = Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS)
WAITING = "Waiting for approval in <#C0APPROVALS>: Refunds a card"


@pytest.fixture
async def quick_world(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    async with open_world(stub, _url(tmp_path), api_timeout_seconds=0.5) as opened:
        yield opened


def _url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"


async def catch_up(world: SlackWorld, seconds: int = 40) -> None:
    """Time passes in the bot's steps (its outbox tried every 3 s)."""
    for _ in range(seconds // 3):
        await world.clock.advance(timedelta(seconds=3))
    await world.settle()


def posted_in(world: SlackWorld, channel: str, text: str) -> list[dict[str, Any]]:
    return [m for m in world.stub.posted if m["channel"] == channel and m["text"] == text]


@pytest.mark.parametrize("kind", ["500", "reset"])
async def test_a_note_slack_failed_is_posted_once_then_updated(
    world: SlackWorld, kind: str
) -> None:
    await world.stub.fail_all(kind, "chat.postMessage", "chat.update", channels=(OWNER_CHANNEL,))
    pause_id = await ask_refund_in_thread(world)  # asked in #approvals; the note fails
    assert posted_in(world, OWNER_CHANNEL, WAITING) == []

    assert (await world.click(MANAGER, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]
    await catch_up(world)  # Slack still fails the requester's thread: all still owed
    assert posted_in(world, OWNER_CHANNEL, WAITING) == []

    await world.stub.restore()
    await catch_up(world)

    [note] = posted_in(world, OWNER_CHANNEL, WAITING)
    assert note["thread_ts"] == THREAD.ts
    assert note["metadata"]["event_type"] == SAID_EVENT
    updates = [c.payload for c in world.stub.of("chat.update") if c.payload["ts"] == note["ts"]]
    assert len(updates) == 1  # the note, then its outcome
    assert "approved" in json.dumps(updates[0]["blocks"]).lower()
    ends = [
        m for m in world.stub.posted if (m.get("metadata") or {}).get("event_type") == END_EVENT
    ]
    assert len(ends) == 1
    assert await world.app.outbox.count("slack") == 0
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_read_reply_is_said_once_after_an_outage(world: SlackWorld) -> None:
    await ask_refund(world)
    await world.stub.fail_all("500", "chat.postMessage", channels=(APPROVALS,))

    assert (await world.message(MANAGER, "lgtm", thread_ts=FIRST_POST)).status == 200
    await world.settle()
    assert len(world.ledger.runs) == 1  # the answer is not held by the line
    read = 'Read "lgtm" as approve.'
    assert posted_in(world, APPROVALS, read) == []

    await world.stub.restore()
    await catch_up(world, 12)
    [line] = posted_in(world, APPROVALS, read)
    assert line["thread_ts"] == FIRST_POST
    await catch_up(world)
    assert len(posted_in(world, APPROVALS, read)) == 1


async def test_a_line_slack_made_without_answering_is_not_said_again_by_the_next_instance(
    stub: SlackStub, tmp_path: Path
) -> None:
    """Slack took the line and withheld its answer (a hang); the process stops; the instance
    that starts next finds the line's mark and posts nothing."""
    async with open_world(stub, _url(tmp_path), api_timeout_seconds=0.5) as first:
        await ask_refund(first)
        await stub.fail_all("hang", "chat.postMessage")
        await first.message(MANAGER, "lgtm", thread_ts=FIRST_POST)
        await first.settle()
        assert len(first.ledger.runs) == 1
    await stub.restore()
    read = 'Read "lgtm" as approve.'
    assert len([m for m in stub.posted if m["text"] == read]) == 1  # made, unanswered

    async with open_world(stub, _url(tmp_path), api_timeout_seconds=0.5) as second:
        await catch_up(second, 150)  # past the dead instance's claim
        assert await second.app.outbox.count("slack") == 0
    assert len([m for m in stub.posted if m["text"] == read]) == 1


async def test_a_hint_is_not_said_once_its_question_closed(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    await world.stub.fail_all("500", "chat.postMessage", channels=(APPROVALS,))
    await world.message(MANAGER, "what is this?", thread_ts=FIRST_POST)
    await world.settle()
    assert await world.app.outbox.count("slack") == 1  # the hint, owed

    assert (await world.click(MANAGER, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    await world.stub.restore()
    await catch_up(world)

    hints = [m for m in world.stub.posted if "could not read" in m["text"]]
    assert hints == []
    assert await world.app.outbox.count("slack") == 0


async def test_a_question_whose_post_hung_and_closed_unasked_loses_its_buttons(
    quick_world: SlackWorld,
) -> None:
    world = quick_world
    await world.stub.fail_all("hang", "chat.postMessage")
    with pytest.raises(ChannelUnavailableError):
        await ask_refund_in_thread(world)
    [hung] = world.stub.of("chat.postMessage")  # Slack made it; the bot does not know
    assert buttons(hung.blocks())
    await world.app.cancel(THREAD.thread_id(), tenant_id=TEAM, by="U0OWNER")
    assert await world.app.list_pending(tenant_id=TEAM) == []

    await world.stub.restore()
    await catch_up(world, 12)

    [posted] = [m for m in world.stub.posted if m["channel"] == APPROVALS]
    updates = [c for c in world.stub.of("chat.update") if c.payload["ts"] == posted["ts"]]
    assert updates, "the closed question still offers its buttons"
    assert buttons(updates[-1].blocks()) == []
    pause_id = str(buttons(hung.blocks())[0]["value"])
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.CANCELLED
    assert len([m for m in world.stub.posted if m["channel"] == APPROVALS]) == 1


def test_slacks_retry_after_is_read() -> None:
    response = AsyncSlackResponse(
        client=None,
        http_verb="POST",
        api_url="https://slack.com/api/chat.postMessage",
        req_args={},
        data={"ok": False, "error": "ratelimited"},
        headers={"Retry-After": "30"},
        status_code=429,
    )
    error = SlackApiError("ratelimited", response)  # type: ignore[no-untyped-call]
    assert retry_after(error) == timedelta(seconds=30)
    assert retry_after(TimeoutError()) is None


async def test_a_question_not_yet_delivered_is_counted_and_listed_as_such(
    quick_world: SlackWorld,
) -> None:
    world = quick_world
    await ask_while_failing(world, "500")
    [pending] = await world.app.list_pending(tenant_id=TEAM)

    samples = await scrape(world)
    assert value(samples, "countersign_questions_undelivered", role=pending.role) == 1
    assert value(samples, "countersign_pending_pauses", role=pending.role) == 1
    listed = json.dumps(await pending_of(world, MANAGER))
    assert NOT_YET_DELIVERED in listed
    view = question_view(pending, None, now=world.clock.now())  # the web inbox's entry of it
    entry = InboxEntry(url="/q", question=view, delivered=pending.delivered)  # as web.inbox
    assert NOT_YET_DELIVERED in inbox_page(MANAGER, [entry])

    await world.stub.restore()
    await world.clock.advance(RECOVERED)
    await world.clock.advance(timedelta(seconds=6))  # past the metrics' 5 s reading
    samples = await scrape(world)
    assert value(samples, "countersign_questions_undelivered", role=pending.role) == 0
    assert NOT_YET_DELIVERED not in json.dumps(await pending_of(world, MANAGER))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_reply_recorded_by_a_process_that_died_before_saying_how_it_was_read_is_said_once_after_a_restart(  # noqa: E501
    stub: SlackStub, tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line is owed before the reply is read: an instance that recorded the answer and
    died before saying it leaves it to the next one, which says it once."""
    read = 'Read "lgtm" as approve.'
    async with database(backend, tmp_path) as url:
        async with open_world(stub, url, settings=KEYED) as first:
            pause_id = await ask_refund(first)
            with monkeypatch.context() as died:  # after the ack: nothing said, nothing run

                async def dead(*_: object) -> None:
                    return None

                died.setattr(Answering, "_continue", dead)
                assert (await first.message(MANAGER, "lgtm", thread_ts=FIRST_POST)).status == 200
                await first.settle()
            recorded = await first.app.find_pause(pause_id, tenant_id=TEAM)
            assert recorded is not None and recorded.status is not PauseStatus.PENDING
            assert [m for m in stub.posted if m["text"] == read] == []
            assert await first.app.outbox.count("slack", kind=READ_LINE) == 1

        async with open_world(stub, url, settings=KEYED) as second:
            second.llm.then_return("refund done")
            await catch_up(second, 150)  # past the dead instance's claim
            [line] = [m for m in stub.posted if m["text"] == read]
            assert line["thread_ts"] == FIRST_POST
            await catch_up(second)
            assert await second.app.outbox.count("slack") == 0
    assert len([m for m in stub.posted if m["text"] == read]) == 1


async def test_a_reply_that_closed_nothing_owes_no_line(world: SlackWorld) -> None:
    """Owed before it is read, the line of a reply refused (a stranger's), not understood or
    answered elsewhere meanwhile is forgotten: never said, nothing left owed."""
    pause_id = await ask_refund(world)
    await world.message(STRANGER, "lgtm", thread_ts=FIRST_POST)
    await world.message(MANAGER, "what is this?", thread_ts=FIRST_POST)
    await world.settle()
    assert await world.app.outbox.count("slack", kind=READ_LINE) == 0
    assert (await world.click(MANAGER, APPROVE_ACTION, pause_id)).status == 200
    await world.message(MANAGER, "lgtm", thread_ts=FIRST_POST)
    await catch_up(world)
    assert [m for m in world.stub.posted if m["text"].startswith("Read ")] == []
    assert await world.app.outbox.count("slack") == 0


async def test_a_line_owed_by_a_process_that_died_before_reading_the_reply_waits_then_is_moot(
    world: SlackWorld,
) -> None:
    """Owed, and the process died before the reply was read (nothing recorded): the line
    waits while the question does, and is forgotten once something else closed it."""
    pause_id = await ask_refund(world)
    lines = ReadLines(app=world.app, outbox=world.bot.gateway.outbox)
    held = await lines.hold(
        pause_id,
        tenant_id=TEAM,
        by=MANAGER,
        reply="lgtm",
        channel=APPROVALS,
        thread_ts=FIRST_POST,
        reply_ts="1700000000.000099",
    )
    assert held.entry is not None
    await catch_up(world, 150)  # the claim lapsed: the question waits, so does the line
    assert await world.app.outbox.count("slack", kind=READ_LINE) == 1

    assert (await world.click(MANAGER, APPROVE_ACTION, pause_id)).status == 200
    await catch_up(world)
    assert [m for m in world.stub.posted if m["text"].startswith("Read ")] == []
    assert await world.app.outbox.count("slack") == 0
