"""A reminder or an escalation whose sweep died after telling Slack and before recording it is
sent again once its claim lapses (``retried``): Slack finds its marked message in the question's
thread or the escalation conversation and posts nothing twice; one that never reached Slack is
posted then."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from bot import PauseStatus
from bot.runtime.nudges import NUDGE_CLAIM
from bot.testing import inspect_app
from channels.slack.nudge_marks import NUDGE_EVENT
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import assert_sent_valid
from tests.slack.conftest import SlackWorld
from tests.slack.office import APPROVALS, ESCALATIONS, ONCALL
from tests.slack.stub import TEAM
from tests.slack.test_timing import _ask_a_wire, _hours

LAPSED = NUDGE_CLAIM + timedelta(seconds=5)


def _dies_once_after_telling(world: SlackWorld) -> list[str]:
    """The next ``record_nudge`` fails as an instance dying after the channel call would; the
    returned list collects the pauses whose record was lost."""
    store = inspect_app(world.app).store
    record_nudge: Callable[..., Awaitable[bool]] = store.record_nudge
    lost: list[str] = []

    async def dying(pause_id: str, **kwargs: Any) -> bool:
        if not lost:
            lost.append(pause_id)
            raise ConnectionError("the instance died")
        return await record_nudge(pause_id, **kwargs)

    store.record_nudge = dying  # type: ignore[method-assign]
    return lost


def _thread_posts(world: SlackWorld) -> list[dict[str, Any]]:
    return [m for m in world.stub.posted if m.get("thread_ts")]


async def test_a_reminder_already_in_the_thread_is_not_posted_again(world: SlackWorld) -> None:
    pause_id = await _ask_a_wire(world)
    lost = _dies_once_after_telling(world)

    await _hours(world, 1)  # the first reminder is posted; its record is lost
    assert lost == [pause_id]
    [reminder] = _thread_posts(world)
    assert reminder["metadata"]["event_type"] == NUDGE_EVENT
    assert reminder["metadata"]["event_payload"]["nudge"] == "reminder-1"

    await world.clock.advance(LAPSED)  # the claim lapsed: sent again, found in the thread
    await world.settle()
    assert _thread_posts(world) == [reminder]
    [looked] = world.stub.of("conversations.replies")
    assert looked.payload["channel"] == APPROVALS and looked.payload["ts"] == reminder["thread_ts"]
    record = await inspect_app(world.app).store.find(TEAM, pause_id)
    assert record is not None and record.reminders_sent == 1 and record.nudge_claimed_at is None

    await _hours(world, 2)  # the second reminder, at 3 h, as scheduled, without a lookup
    assert [m["metadata"]["event_payload"]["nudge"] for m in _thread_posts(world)] == [
        "reminder-1",
        "reminder-2",
    ]
    assert len(world.stub.of("conversations.replies")) == 1
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_reminder_that_never_reached_slack_is_posted_when_resent(
    world: SlackWorld,
) -> None:
    pause_id = await _ask_a_wire(world)
    store = inspect_app(world.app).store
    record = await store.find(TEAM, pause_id)
    assert record is not None and record.nudge_at is not None
    due = record.nudge_at  # an instance claims the first reminder at 1 h and dies at once
    assert await store.claim_nudge(pause_id, seen=due, until=due + NUDGE_CLAIM, at=due)

    await _hours(world, 1)
    assert _thread_posts(world) == []  # claimed by the dead instance
    await world.clock.advance(NUDGE_CLAIM)
    await world.settle()

    [reminder] = _thread_posts(world)
    assert reminder["metadata"]["event_payload"]["nudge"] == "reminder-1"
    assert len(world.stub.of("conversations.replies")) == 1  # looked, found nothing, posted


async def test_an_escalated_copy_already_posted_is_adopted_and_updated_with_the_outcome(
    world: SlackWorld,
) -> None:
    pause_id = await _ask_a_wire(world)
    await _hours(world, 3)  # two reminders, recorded
    lost = _dies_once_after_telling(world)
    messages = world.bot.messages
    add = messages.add

    async def add_dying(ref: Any, at: Any) -> bool:  # the copy posted, its reference lost
        if ref.escalated_copy:
            messages.add = add  # type: ignore[method-assign]
            raise ConnectionError("the instance died")
        return await add(ref, at)

    messages.add = add_dying  # type: ignore[method-assign]

    await _hours(world, 1)  # 4 h: the note and the copy are posted, nothing recorded
    assert lost == [pause_id]
    copies = [m for m in world.stub.posted if m["channel"] == ESCALATIONS]
    assert len(copies) == 1
    assert [c.escalated_copy for c in await messages.copies(pause_id)] == [False]

    await world.clock.advance(LAPSED)  # resent: the note and the copy are found
    await world.settle()
    assert [m for m in world.stub.posted if m["channel"] == ESCALATIONS] == copies
    notes = [
        m for m in _thread_posts(world) if m["metadata"]["event_payload"]["nudge"] == "escalation"
    ]
    assert len(notes) == 1
    [history] = world.stub.of("conversations.history")
    assert history.payload["channel"] == ESCALATIONS
    [_, adopted] = await messages.copies(pause_id)
    assert adopted.escalated_copy and adopted.ts == copies[0]["ts"]

    await world.click(ONCALL, APPROVE_ACTION, pause_id)
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.TAKEN
    updated = {(u.payload["channel"], u.payload["ts"]) for u in world.stub.of("chat.update")}
    assert (ESCALATIONS, copies[0]["ts"]) in updated
    assert any(channel == APPROVALS for channel, _ in updated)
    assert_sent_valid(world.stub.calls, {pause_id})
