"""The requester's note: in the thread where they started the work, where their request waits,
updated with the outcome (approved, rejected with the reason, withdrawn, cancelled)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot import ChannelWithdrawal, ExecutionStatus, PauseResolution, Settings
from bot.store.closings import Withdrawn
from bot.testing import call_tool, inspect_app
from channels.slack.notes import NoteRef
from channels.slack.render import APPROVE_ACTION
from channels.slack.threads import SlackThread
from tests.databases import TEST_ENCRYPTION_KEYS, postgres_database
from tests.slack.checks import assert_sent_valid, buttons
from tests.slack.conftest import OWNER_CHANNEL, SlackWorld, open_world
from tests.slack.office import (
    APPROVALS,
    MANAGER,
    OWNER,
    SECRET_EMAIL,
    BookExpenseTool,
    RefundCardTool,
    SlackRefundChannel,
)
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_clicks import ask_refund, channel_of

THREAD = SlackThread(team=TEAM, channel=OWNER_CHANNEL, ts="1699999999.000100")
QUESTION_TS = "1700000000.000001"  # the stub's first post: the approval message
NOTE_TS = "1700000000.000002"  # its second: the note
WAITING = ":hourglass_flowing_sand: *Refunds a card* is waiting for approval in <#C0APPROVALS>."


async def ask_refund_in_thread(world: SlackWorld) -> str:
    """The owner's Slack thread asks for a refund of 1234.5; returns the pause id."""
    world.llm.then_return(
        call_tool(RefundCardTool, {"order_id": "7", "amount": 1234.5}), "refund done"
    )
    result = await world.execute("refund order 7", owner=OWNER, thread=THREAD)
    assert result.status is ExecutionStatus.PAUSED
    question = world.stub.of("chat.postMessage")[0]
    return str(buttons(question.blocks())[0]["value"])


def note_updates(world: SlackWorld) -> list[dict[str, Any]]:
    return [
        c.payload
        for c in world.stub.of("chat.update")
        if (c.payload["channel"], c.payload["ts"]) == (OWNER_CHANNEL, NOTE_TS)
    ]


def headline(payload: dict[str, Any]) -> str:
    blocks = payload["blocks"]
    assert isinstance(blocks, list)
    text = blocks[0]["text"]["text"]
    assert isinstance(text, str)
    return text


async def test_the_requester_is_told_in_their_thread_where_the_request_waits(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund_in_thread(world)

    question, note = world.stub.of("chat.postMessage")
    assert (question.payload["channel"], "thread_ts" in question.payload) == (APPROVALS, False)
    assert (note.payload["channel"], note.payload["thread_ts"]) == (OWNER_CHANNEL, THREAD.ts)
    assert note.payload["text"] == "Waiting for approval in <#C0APPROVALS>: Refunds a card"
    assert [b["elements"][0]["text"] if b["type"] == "context" else b["text"]["text"]
            for b in note.blocks()] == [
        WAITING,
        "Order ID: 7 · Amount: 1,234.50 · Email: ••••••",
        "Who answers: A manager approves card refunds",
    ]  # fmt: skip
    assert buttons(note.blocks()) == []
    assert SECRET_EMAIL not in str(note.payload)
    assert await world.bot.notes.get(pause_id) == NoteRef(
        channel_id=OWNER_CHANNEL, ts=NOTE_TS, thread_ts=THREAD.ts
    )
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_an_approval_updates_the_note(world: SlackWorld) -> None:
    pause_id = await ask_refund_in_thread(world)

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()

    [note] = note_updates(world)
    assert headline(note) == f":white_check_mark: *Refunds a card* was approved by <@{MANAGER}>."
    assert note["text"] == f"Refunds a card was approved by <@{MANAGER}>."
    assert [c.payload["ts"] for c in world.stub.of("chat.update")] == [QUESTION_TS, NOTE_TS]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_rejection_in_words_updates_the_note_with_the_reason(world: SlackWorld) -> None:
    pause_id = await ask_refund_in_thread(world)

    await world.message(MANAGER, "reject: wrong customer", thread_ts=QUESTION_TS)
    await world.settle()

    [note] = note_updates(world)
    assert headline(note) == (f":x: *Refunds a card* was rejected by <@{MANAGER}>: wrong customer")
    assert world.ledger.runs == []
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_withdrawal_updates_the_note(world: SlackWorld) -> None:
    pause_id = await ask_refund_in_thread(world)
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None
    ask, context = channel_of(pause)
    await inspect_app(world.app).store.close(
        pause_id, Withdrawn(), at=world.clock.now(), tenant_id=TEAM
    )

    await SlackRefundChannel(world.bot.gateway, context).withdraw(
        ChannelWithdrawal(
            pause_id=pause_id, value=ask.value, resolution=PauseResolution.WITHDRAWN, role=ask.role
        )
    )

    [note] = note_updates(world)
    assert headline(note) == (
        ":heavy_minus_sign: *Refunds a card* was withdrawn: it is no longer needed."
    )


async def test_a_cancellation_updates_the_note(world: SlackWorld) -> None:
    pause_id = await ask_refund_in_thread(world)

    await world.app.cancel(THREAD.thread_id(), tenant_id=TEAM)

    [note] = note_updates(world)
    assert headline(note) == ":no_entry_sign: *Refunds a card* was cancelled."
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_retried_send_posts_no_second_note(world: SlackWorld) -> None:
    pause_id = await ask_refund_in_thread(world)
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None
    ask, context = channel_of(pause)

    await SlackRefundChannel(world.bot.gateway, context).send(ask)

    assert len(world.stub.of("chat.postMessage")) == 2


async def test_no_note_when_the_question_is_asked_in_the_requesters_own_thread(
    world: SlackWorld,
) -> None:
    world.llm.then_return(call_tool(BookExpenseTool, {"purpose": "taxi", "amount": 12.0}), "ok")

    await world.execute("book a taxi", owner=OWNER, thread=THREAD)

    [question] = world.stub.of("chat.postMessage")
    assert question.payload["thread_ts"] == THREAD.ts
    assert await world.bot.notes.get(str(buttons(question.blocks())[0]["value"])) is None


async def test_no_note_for_work_not_started_in_slack(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    assert len(world.stub.of("chat.postMessage")) == 1
    assert await world.bot.notes.get(pause_id) is None


async def test_a_note_that_cannot_be_updated_leaves_the_answer_shown(world: SlackWorld) -> None:
    pause_id = await ask_refund_in_thread(world)
    world.stub.channel_errors[OWNER_CHANNEL] = "message_not_found"

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()

    assert len(world.ledger.runs) == 1
    [question, _] = world.stub.of("chat.update")  # the note's update was answered an error
    assert "*Approved* by" in str(question.payload["blocks"])
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.closed


async def test_a_note_that_cannot_be_posted_does_not_stop_the_question(
    world: SlackWorld,
) -> None:
    world.stub.channel_errors[OWNER_CHANNEL] = "not_in_channel"

    pause_id = await ask_refund_in_thread(world)

    assert await world.bot.messages.get(pause_id) is not None
    assert await world.bot.notes.get(pause_id) is None


async def test_notes_live_in_the_in_memory_bot_database_too(memory_world: SlackWorld) -> None:
    pause_id = await ask_refund_in_thread(memory_world)

    await memory_world.click(MANAGER, APPROVE_ACTION, pause_id)
    await memory_world.settle()

    [note] = note_updates(memory_world)
    assert "was approved by" in headline(note)


async def test_a_note_is_found_again_after_a_restart(stub: SlackStub, tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    async with open_world(stub, url) as world:
        pause_id = await ask_refund_in_thread(world)
    async with open_world(stub, url) as world:
        world.llm.then_return("refund done")
        await world.click(MANAGER, APPROVE_ACTION, pause_id)
        await world.settle()

        [note] = note_updates(world)
        assert "was approved by" in headline(note)


@pytest.mark.postgres
async def test_notes_on_postgresql_migrate_once_and_answer(stub: SlackStub) -> None:
    settings = Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS)
    async with postgres_database() as url:
        async with open_world(stub, url, settings=settings) as world:
            pause_id = await ask_refund_in_thread(world)
            await world.click(MANAGER, APPROVE_ACTION, pause_id)
            await world.settle()
            [note] = note_updates(world)
            assert "was approved by" in headline(note)
        async with open_world(
            stub, url, settings=settings
        ) as world:  # a second start finds the schema in place
            assert await world.bot.notes.get(pause_id) is not None
