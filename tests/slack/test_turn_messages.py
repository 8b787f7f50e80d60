"""The questions one model turn asked together are one Slack message (issue 29, item 3), as
signed requests against the Web API stub: each item with its own buttons, "Approve all" over
those still waiting; each item settles its own pause and the message shows each outcome; a
retried "Approve all" approves nothing twice; a question alone posts as before; an outage
while posting leaves one message, asked once; a reply in its thread answers nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot import ExecutionStatus
from bot.core.enums import PauseStatus
from bot.core.errors import ChannelUnavailableError
from bot.testing import call_tool
from channels.kit.texts import batch_skipped
from channels.slack.flows import SEVERAL_IN_MESSAGE
from channels.slack.render import APPROVE_ACTION, REJECT_ACTION
from channels.slack.render_turn import MAX_TURN_ITEMS, ONE_BY_ONE, TURN_APPROVE_ALL
from channels.slack.turn_answers import NOT_THIS_MESSAGE
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import APPROVALS, MANAGER, STRANGER, BookExpenseTool, RefundCardTool
from tests.slack.stub import TEAM, Call, SlackStub

RECOVERED = timedelta(seconds=15)  # past the lease and a sweep or two


def refunds(count: int) -> list[Any]:
    return [
        call_tool(RefundCardTool, {"order_id": str(i), "amount": 10.0 + i}) for i in range(count)
    ]


def shown(world: SlackWorld) -> list[Call]:
    """Every rendering of an approval message, posted or updated, in order."""
    methods = ("chat.postMessage", "chat.update")
    return [
        c for c in world.stub.calls if c.method in methods and c.payload["channel"] == APPROVALS
    ]


def latest(world: SlackWorld, ts: str) -> list[dict[str, Any]]:
    """The message ``ts`` as it stands: its last update, else its post (found by its mark)."""
    for call in reversed(shown(world)):
        if call.payload.get("ts") == ts:
            return call.blocks()
    [post] = [m for m in world.stub.posted if m["ts"] == ts]
    for call in world.stub.of("chat.postMessage"):
        metadata = call.payload.get("metadata")
        if (json.loads(metadata) if isinstance(metadata, str) else metadata) == post["metadata"]:
            return call.blocks()
    raise AssertionError(f"no post of {ts}")


def approve_ids(blocks: list[dict[str, Any]]) -> list[str]:
    return [
        str(b["value"]) for b in buttons(blocks) if str(b["action_id"]).startswith(APPROVE_ACTION)
    ]


def approve_all(blocks: list[dict[str, Any]]) -> Mapping[str, Any] | None:
    found = [b for b in buttons(blocks) if b["action_id"] == TURN_APPROVE_ALL]
    return found[0] if found else None


def ran(world: SlackWorld) -> list[str]:
    return sorted(str(args["order_id"]) for _, args in world.ledger.runs)


def told(world: SlackWorld) -> list[str]:
    """What the clicker was told (ephemerally, in the message's channel)."""
    return [str(c.payload.get("text", "")) for c in world.stub.of("chat.postEphemeral")]


async def ask_turn(world: SlackWorld, count: int = 3) -> tuple[str, list[str]]:
    """The model asks ``count`` refunds at once: the turn's message and its pause ids."""
    world.llm.then_return(refunds(count))
    result = await world.execute("refund these")
    assert result.status is ExecutionStatus.PAUSED
    [post] = [m for m in world.stub.posted if m["channel"] == APPROVALS]
    ts = str(post["ts"])
    return ts, approve_ids(latest(world, ts))


async def test_three_tools_at_once_are_one_message_with_three_items(world: SlackWorld) -> None:
    ts, ids = await ask_turn(world)

    assert len(world.stub.of("chat.postMessage")) == 1
    assert len(ids) == 3 and len(set(ids)) == 3
    blocks = latest(world, ts)
    text = all_text(blocks)
    assert "Approval needed: 3 requests" in text
    assert all(f"*Order ID*\n{i}" in text for i in range(3))  # each item's own arguments
    assert ONE_BY_ONE in text
    rejects = [b["value"] for b in buttons(blocks) if b["action_id"].startswith(REJECT_ACTION)]
    assert rejects == ids  # each item its own buttons, in the model's order
    button = approve_all(blocks)
    assert button is not None and button["text"]["text"] == "Approve all 3"
    assert all(pause_id not in str(button["value"]) for pause_id in ids)  # sealed
    for pause_id in ids:  # each question's reference points at the shared message
        ref = await world.bot.messages.get(pause_id)
        assert ref is not None and (ref.channel_id, ref.ts) == (APPROVALS, ts)
    assert_sent_valid(world.stub.calls, set(ids))


async def test_one_item_answered_by_its_button_then_approve_all_skips_one_answered_meanwhile(
    world: SlackWorld,
) -> None:
    ts, ids = await ask_turn(world)

    await world.click(MANAGER, APPROVE_ACTION, ids[0], message_ts=ts)
    await world.settle()
    assert ran(world) == ["0"]
    blocks = latest(world, ts)
    assert approve_ids(blocks) == ids[1:]  # the others keep their buttons
    assert f"Approved* by <@{MANAGER}>" in all_text(blocks)
    assert "2 of 3 requests still wait" in all_text(blocks)
    button = approve_all(blocks)
    assert button is not None and button["text"]["text"] == "Approve all 2"

    # meanwhile, the second is answered elsewhere (another surface: the App's answer path)
    await world.app.resume(ids[1], decision={"approved": True}, tenant_id=TEAM, answered_by=MANAGER)
    await world.settle()
    assert ran(world) == ["0", "1"]

    response = await world.click(MANAGER, TURN_APPROVE_ALL, str(button["value"]), message_ts=ts)
    assert response.status == 200
    await world.settle()
    assert ran(world) == ["0", "1", "2"]  # each tool once
    [said] = [t for t in told(world) if "Approved." in t]
    assert said.count("Approved.") == 1
    assert said.count(batch_skipped("Approved by you.")) == 1
    blocks = latest(world, ts)
    assert approve_ids(blocks) == [] and approve_all(blocks) is None  # all settled: no buttons
    assert "3 requests, none waiting any more" in all_text(blocks)
    assert all_text(blocks).count("Approved* by") == 3
    for pause_id in ids:  # each item its own pause, settled
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None and pause.status is PauseStatus.TAKEN

    retried = await world.click(MANAGER, TURN_APPROVE_ALL, str(button["value"]), message_ts=ts)
    assert retried.status == 200
    await world.settle()
    assert ran(world) == ["0", "1", "2"]  # approved nothing twice
    assert told(world)[-1].count("Already answered elsewhere, skipped") == 2
    assert_sent_valid(world.stub.calls, set(ids))


async def test_approve_all_answers_every_waiting_item_recorded_before_its_run_moves(
    world: SlackWorld,
) -> None:
    ts, ids = await ask_turn(world, 4)
    button = approve_all(latest(world, ts))
    assert button is not None

    value = str(button["value"])
    await asyncio.gather(  # double-clicked: two at once
        world.click(MANAGER, TURN_APPROVE_ALL, value, message_ts=ts),
        world.click(MANAGER, TURN_APPROVE_ALL, value, message_ts=ts),
    )
    await world.settle()

    assert ran(world) == ["0", "1", "2", "3"]
    audit = await world.app.list_answered(tenant_id=TEAM, responder=MANAGER)
    assert sorted(entry.pause_id for entry in audit) == sorted(ids)  # each its own entry
    assert {entry.responder for entry in audit} == {MANAGER}
    assert approve_ids(latest(world, ts)) == []


async def test_an_approve_all_of_another_message_or_forged_answers_nothing(
    world: SlackWorld,
) -> None:
    ts, _ = await ask_turn(world)
    button = approve_all(latest(world, ts))
    assert button is not None
    for value, message_ts in ((str(button["value"]), "1.0"), ("k1.forged", ts)):
        await world.click(MANAGER, TURN_APPROVE_ALL, value, message_ts=message_ts)
        await world.settle()
        assert told(world)[-1] == NOT_THIS_MESSAGE
    assert ran(world) == []


async def test_approve_all_by_someone_not_an_approver_answers_nothing(world: SlackWorld) -> None:
    ts, ids = await ask_turn(world)
    button = approve_all(latest(world, ts))
    assert button is not None

    await world.click(STRANGER, TURN_APPROVE_ALL, str(button["value"]), message_ts=ts)
    await world.settle()

    assert ran(world) == []
    assert told(world)[-1].count("Refused") + told(world)[-1].count("refused") == 3
    assert approve_ids(latest(world, ts)) == ids  # all still waiting, with their buttons


async def test_a_reply_in_the_thread_of_a_turn_answers_nothing(world: SlackWorld) -> None:
    ts, ids = await ask_turn(world)

    await world.message(MANAGER, "approve", thread_ts=ts)
    await world.settle()

    assert ran(world) == []
    assert any(SEVERAL_IN_MESSAGE in t for t in world.stub.texts())
    for pause_id in ids:
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None and pause.status is PauseStatus.PENDING


async def test_a_cancelled_turn_shows_each_item_withdrawn_and_no_buttons(
    world: SlackWorld,
) -> None:
    world.llm.then_return(refunds(3))
    result = await world.execute("refund these")
    [post] = [m for m in world.stub.posted if m["channel"] == APPROVALS]
    ts = str(post["ts"])
    ids = approve_ids(latest(world, ts))

    await world.app.cancel(result.thread_id, tenant_id=TEAM)
    await world.settle()

    blocks = latest(world, ts)
    assert buttons(blocks) == []
    assert "3 requests, none waiting any more" in all_text(blocks)
    for pause_id in ids:
        ref = await world.bot.messages.get(pause_id)
        assert ref is not None and ref.closed
    assert ran(world) == []


async def test_a_lone_question_posts_as_before(world: SlackWorld) -> None:
    world.llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}))
    await world.execute("refund order 7")

    [post] = world.stub.of("chat.postMessage")
    assert world.stub.of("chat.update") == []
    assert approve_all(post.blocks()) is None
    assert post.blocks()[0]["type"] == "header"
    assert "Approval needed: Refunds a card" in str(post.payload["text"])


async def test_questions_for_other_roles_are_asked_apart(world: SlackWorld) -> None:
    world.llm.then_return(
        [*refunds(2), call_tool(BookExpenseTool, {"purpose": "taxi", "amount": 12.0})]
    )
    await world.execute("refund and book")

    posts = world.stub.of("chat.postMessage")
    assert len(posts) == 2  # the refunds together; the expense (another role) alone
    refund_ts = {m["ts"] for m in world.stub.posted if "Approval needed" in str(m["text"])}
    assert len(refund_ts) == 2
    counts = sorted(len(approve_ids(latest(world, str(ts)))) for ts in refund_ts)
    assert counts == [1, 2]


async def test_a_turn_beyond_the_cap_is_asked_in_more_messages(world: SlackWorld) -> None:
    world.llm.then_return(refunds(MAX_TURN_ITEMS + 1))
    await world.execute("refund many")

    posted = [str(m["ts"]) for m in world.stub.posted if m["channel"] == APPROVALS]
    assert len(posted) == 2
    counts = sorted(len(approve_ids(latest(world, ts))) for ts in posted)
    assert counts == [1, MAX_TURN_ITEMS]
    all_ids = [i for ts in posted for i in approve_ids(latest(world, ts))]
    assert len(set(all_ids)) == MAX_TURN_ITEMS + 1
    assert_sent_valid(world.stub.calls, set(all_ids))


@pytest.fixture
async def quick_world(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    async with open_world(stub, url, api_timeout_seconds=0.5) as opened:
        yield opened


async def test_a_turn_asked_while_slack_fails_is_posted_once_after(
    quick_world: SlackWorld,
) -> None:
    world = quick_world
    world.llm.then_return(refunds(3))
    await world.stub.fail_all("500", "chat.postMessage")
    with pytest.raises(ChannelUnavailableError):
        await world.execute("refund these")

    await world.clock.advance(RECOVERED)  # still failing: asked again, still waits
    await world.stub.restore()
    await world.clock.advance(RECOVERED)
    await world.settle()

    posted = [m for m in world.stub.posted if m["channel"] == APPROVALS]
    assert len(posted) == 1  # one message for the turn, posted once
    ts = str(posted[0]["ts"])
    ids = approve_ids(latest(world, ts))
    assert len(ids) == 3
    pending = await world.app.list_pending(tenant_id=TEAM)
    assert len(pending) == 3 and all(p.delivered for p in pending)

    button = approve_all(latest(world, ts))
    assert button is not None
    await world.click(MANAGER, TURN_APPROVE_ALL, str(button["value"]), message_ts=ts)
    await world.settle()
    assert ran(world) == ["0", "1", "2"]


async def test_a_join_slack_failed_to_show_is_shown_once_it_is_back(
    quick_world: SlackWorld,
) -> None:
    """The first question is posted; Slack then fails the updates that list its siblings: they
    are asked all the same (their references point at the message, the update owed), and the
    message lists them once Slack is back."""
    world = quick_world
    world.llm.then_return(refunds(3))
    await world.stub.fail_all("500", "chat.update")
    result = await world.execute("refund these")
    assert result.status is ExecutionStatus.PAUSED
    [post] = [m for m in world.stub.posted if m["channel"] == APPROVALS]
    ts = str(post["ts"])
    assert len(approve_ids(latest(world, ts))) == 1  # Slack shows the first only, for now

    await world.stub.restore()
    await world.clock.advance(RECOVERED)
    await world.settle()

    ids = approve_ids(latest(world, ts))
    assert len(ids) == 3
    assert len([m for m in world.stub.posted if m["channel"] == APPROVALS]) == 1
    button = approve_all(latest(world, ts))
    assert button is not None
    await world.click(MANAGER, TURN_APPROVE_ALL, str(button["value"]), message_ts=ts)
    await world.settle()
    assert ran(world) == ["0", "1", "2"]
