"""An escalated question's copy (asked again in the escalation conversation) is owed through the
outbox: when Slack fails as the question escalates, the copy is posted once Slack is back, once,
with the question's buttons, and a click on it is taken; a question that closed meanwhile is
asked again nowhere (issue 24)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot import PauseStatus
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import ESCALATIONS, MANAGER, ONCALL
from tests.slack.stub import TEAM
from tests.slack.test_timing import _ask_a_wire, _hours

CAUGHT_UP = timedelta(seconds=30)


def _copies(world: SlackWorld) -> list[dict[str, object]]:
    return [m for m in world.stub.posted if m["channel"] == ESCALATIONS]


@pytest.mark.parametrize("kind", ["500", "refused", "429"])
async def test_an_escalated_copy_slack_failed_is_posted_once_after_the_outage(
    world: SlackWorld, kind: str
) -> None:
    pause_id = await _ask_a_wire(world)
    await _hours(world, 3)  # reminded at 1 h and 3 h
    await world.stub.fail_all(kind)

    await _hours(world, 1)  # 4 h: escalated while Slack fails
    assert _copies(world) == []
    await world.clock.advance(CAUGHT_UP)  # still failing: still owed
    await world.settle()
    assert _copies(world) == []

    await world.stub.restore()
    await world.clock.advance(CAUGHT_UP)
    await world.settle()
    [copy] = _copies(world)
    question, *_ = world.stub.of("chat.postMessage")  # the question itself, first
    [posted] = [c for c in world.stub.of("chat.postMessage") if c.payload["channel"] == ESCALATIONS]
    assert [b["value"] for b in buttons(posted.blocks())] == [
        b["value"] for b in buttons(question.blocks())
    ]
    stored = [ref for ref in await world.bot.messages.copies(pause_id) if ref.escalated_copy]
    assert [ref.ts for ref in stored] == [copy["ts"]]

    await world.clock.advance(CAUGHT_UP)  # said once
    await world.settle()
    assert len(_copies(world)) == 1
    await world.click(ONCALL, APPROVE_ACTION, pause_id, channel=ESCALATIONS)
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.TAKEN
    updated = {(u.payload["channel"], u.payload["ts"]) for u in world.stub.of("chat.update")}
    assert (ESCALATIONS, copy["ts"]) in updated
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_owed_copy_of_a_question_answered_meanwhile_is_not_posted(
    world: SlackWorld,
) -> None:
    pause_id = await _ask_a_wire(world)
    await _hours(world, 3)
    await world.stub.fail_all("500", "chat.postMessage")
    await _hours(world, 1)  # escalated; its copy owed
    await world.click(MANAGER, APPROVE_ACTION, pause_id)  # answered on the question itself
    await world.settle()

    await world.stub.restore()
    await world.clock.advance(CAUGHT_UP)
    await world.settle()
    assert _copies(world) == []
    assert [name for name, _ in world.ledger.runs] == ["wire"]
