"""What is owed to Slack after an outage is delivered once it is back: an answered question's
message loses its buttons, a withdrawn one says so, and the run's end is said in the
requester's thread — once, never twice (issue 24, finding 3; the requester told of the run)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from channels.slack.nudge_marks import END_EVENT
from channels.slack.render import APPROVE_ACTION
from tests.slack.conftest import OWNER_CHANNEL, SlackWorld
from tests.slack.office import APPROVALS, MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_notes import QUESTION_TS, THREAD, ask_refund_in_thread

CAUGHT_UP = timedelta(seconds=40)  # past the 30 s grace of an untold end, a sweep or two


def question_updates(world: SlackWorld) -> list[dict[str, object]]:
    return [
        c.payload
        for c in world.stub.of("chat.update")
        if (c.payload.get("channel"), c.payload.get("ts")) == (APPROVALS, QUESTION_TS)
    ]


def ends_said(world: SlackWorld) -> list[dict[str, object]]:
    return [
        m
        for m in world.stub.posted
        if m["channel"] == OWNER_CHANNEL
        and (m.get("metadata") or {}).get("event_type") == END_EVENT
    ]


@pytest.mark.parametrize("kind", ["500", "refused", "reset"])
async def test_an_answer_given_while_slack_fails_is_shown_and_its_end_said_once(
    world: SlackWorld, kind: str
) -> None:
    pause_id = await ask_refund_in_thread(world)
    if kind == "refused":  # clicks reach the bot; its calls to Slack are refused
        await world.stub.fail_all("refused")
    else:
        await world.stub.fail_all(kind, "chat.update", "chat.postMessage", "chat.postEphemeral")

    assert (await world.click(MANAGER, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]
    assert question_updates(world) == [] or kind == "reset"  # nothing reached Slack
    await world.clock.advance(CAUGHT_UP)  # Slack still failing: still owed
    assert ends_said(world) == []

    await world.stub.restore()
    await world.clock.advance(CAUGHT_UP)
    await world.settle()

    updated = question_updates(world)
    assert updated, "the answered question still offers its buttons"
    assert "actions" not in json.dumps(updated[-1].get("blocks"))
    assert len(ends_said(world)) == 1  # the requester told, once
    await world.clock.advance(CAUGHT_UP)
    assert len(ends_said(world)) == 1


async def test_a_question_withdrawn_while_slack_fails_loses_its_buttons(world: SlackWorld) -> None:
    await ask_refund_in_thread(world)
    await world.stub.fail_all("500")
    await world.app.cancel(THREAD.thread_id(), tenant_id=TEAM, by="U0OWNER")
    assert question_updates(world) == []

    await world.stub.restore()
    await world.clock.advance(CAUGHT_UP)

    updated = question_updates(world)
    assert len(updated) == 1
    assert "actions" not in json.dumps(updated[0].get("blocks"))
