"""Thread replies that answer, messages ignored, Slack retries, and work started from Slack."""

from __future__ import annotations

from typing import Any

import pytest

from bot import App, ExecutionStatus, PauseStatus
from bot.runtime import answers
from bot.testing import call_tool
from channels.slack.answering import HOW_TO_REPLY
from channels.slack.render import APPROVE_ACTION
from channels.slack.render_message import REPLY_HINT
from channels.slack.threads import SlackThread
from interpreters.keyword import reply_help
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import OWNER_CHANNEL, SlackWorld
from tests.slack.office import (
    APPROVALS,
    MANAGER,
    OWNER,
    STRANGER,
    BookExpenseTool,
    WireMoneyTool,
)
from tests.slack.stub import BOT_USER, TEAM
from tests.slack.test_clicks import ask_refund

FIRST_POST = "1700000000.000001"  # the ts the stub gives the first message the bot posts


def thread_posts(world: SlackWorld) -> list[str]:
    return [
        c.payload["text"] for c in world.stub.of("chat.postMessage") if "thread_ts" in c.payload
    ]


async def status_of(world: SlackWorld, pause_id: str) -> PauseStatus:
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None
    return pause.status


async def test_a_reply_in_the_thread_approves(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    response = await world.message(MANAGER, "lgtm", thread_ts=FIRST_POST)
    assert response.status == 200
    await world.settle()

    assert len(world.ledger.runs) == 1
    [update] = world.stub.of("chat.update")
    assert 'Read "lgtm" as approve' in all_text(update.blocks())
    assert buttons(update.blocks()) == []
    assert thread_posts(world) == ['Read "lgtm" as approve.']
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_reply_with_a_reason_rejects(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    await world.message(MANAGER, "reject: wrong customer", thread_ts=FIRST_POST)
    await world.settle()

    assert world.ledger.runs == []
    assert await status_of(world, pause_id) is PauseStatus.TAKEN
    shown = all_text(world.stub.of("chat.update")[0].blocks())
    assert "*Rejected*" in shown and "wrong customer" in shown
    assert thread_posts(world) == ['Read "reject: wrong customer" as reject.']


async def test_an_unreadable_reply_says_why_and_how_to_answer(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    await world.message(MANAGER, "maybe, ask me tomorrow?", thread_ts=FIRST_POST)
    await world.settle()

    assert await status_of(world, pause_id) is PauseStatus.PENDING
    [said] = thread_posts(world)
    assert said == (
        'I could not read "maybe, ask me tomorrow?" as an answer. '
        "The reply reads as a question.\n"
        "I understand these replies:\n"
        "• to approve: approve, yes, ok, lgtm, go ahead or 👍\n"
        "• to reject: reject, no, deny or 👎, with your reason after a colon, "
        "like reject: wrong customer\n"
        "Or use the buttons on the message."
    )
    assert world.stub.of("chat.update") == []


async def test_a_reply_in_another_language_answers_and_is_told_how_to_answer_in_it(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)

    await world.message(MANAGER, "genehmigen?", thread_ts=FIRST_POST)
    await world.settle()

    assert await status_of(world, pause_id) is PauseStatus.PENDING
    [said] = thread_posts(world)
    assert said == (
        'I could not read "genehmigen?" as an answer. '
        "Die Antwort liest sich als Frage.\n"
        "Ich verstehe diese Antworten:\n"
        "• zum Genehmigen: genehmigt, ja, ok, passt, einverstanden oder 👍\n"
        "• zum Ablehnen: abgelehnt, nein, nö oder 👎, mit dem Grund nach einem Doppelpunkt, "
        "etwa abgelehnt: falscher Kunde\n"
        "Oder nutze die Buttons an der Nachricht."
    )

    await world.message(MANAGER, "abgelehnt: falscher Kunde", thread_ts=FIRST_POST)
    await world.settle()

    assert await status_of(world, pause_id) is PauseStatus.TAKEN
    shown = all_text(world.stub.of("chat.update")[0].blocks())
    assert "*Rejected*" in shown and "falscher Kunde" in shown


def test_the_english_help_is_the_interpreters_english_help() -> None:
    assert reply_help("en") == HOW_TO_REPLY


async def test_a_reply_to_a_role_without_interpreter_points_to_the_buttons(
    world: SlackWorld,
) -> None:
    world.llm.then_return(call_tool(WireMoneyTool, {"iban": "DE00", "amount": 5.0}), "wired")
    result = await world.execute("wire 5")
    pause_id = str(buttons(world.stub.of("chat.postMessage")[0].blocks())[0]["value"])
    assert result.status is ExecutionStatus.PAUSED
    assert REPLY_HINT not in all_text(world.stub.of("chat.postMessage")[0].blocks())

    await world.message(MANAGER, "approve", thread_ts=FIRST_POST)
    await world.settle()

    assert await status_of(world, pause_id) is PauseStatus.PENDING
    assert thread_posts(world) == ["This request cannot be answered in words: use the buttons."]


async def test_a_stranger_reply_is_refused_ephemerally(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    await world.message(STRANGER, "approve", thread_ts=FIRST_POST)
    await world.settle()

    assert await status_of(world, pause_id) is PauseStatus.PENDING
    [told] = world.stub.of("chat.postEphemeral")
    assert (told.payload["user"], told.payload["thread_ts"]) == (STRANGER, FIRST_POST)


async def test_bots_edits_and_other_threads_are_ignored(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    before = len(world.stub.calls)

    await world.message(MANAGER, "approve", thread_ts=FIRST_POST, bot_id="B0OTHER")
    await world.message(
        MANAGER,
        "approve",
        thread_ts=FIRST_POST,
        subtype="message_changed",
        message={"text": "approve", "ts": "1"},
    )
    await world.message(MANAGER, "approve", thread_ts=FIRST_POST, subtype="thread_broadcast")
    await world.message(MANAGER, "approve", thread_ts="1600000000.000001")
    await world.message(MANAGER, "approve")  # top level, not a thread
    await world.settle()

    assert await status_of(world, pause_id) is PauseStatus.PENDING
    assert [c.method for c in world.stub.calls[before:] if c.method != "auth.test"] == []


async def test_a_slack_retry_of_a_reply_resumes_once(world: SlackWorld) -> None:
    await ask_refund(world)
    reply = {
        "type": "message",
        "user": MANAGER,
        "text": "approve",
        "channel": APPROVALS,
        "channel_type": "channel",
        "ts": "1700000200.000001",
        "thread_ts": FIRST_POST,
    }

    first = await world.event(reply, event_id="Ev0SAME")
    await world.settle()
    again = await world.event(reply, event_id="Ev0SAME", retry=1)
    await world.settle()

    assert (first.status, again.status) == (200, 200)
    assert len(world.ledger.runs) == 1
    assert thread_posts(world) == ['Read "approve" as approve.']
    assert world.stub.of("chat.postEphemeral") == []


async def test_the_owner_answers_in_their_own_thread(world: SlackWorld) -> None:
    thread = SlackThread(team=TEAM, channel=OWNER_CHANNEL, ts="1699999999.000100")
    world.llm.then_return(
        call_tool(BookExpenseTool, {"purpose": "taxi", "amount": 12.0}), "booked the taxi"
    )
    await world.execute("book a taxi", owner=OWNER, thread=thread)

    await world.message(OWNER, "approved", channel=OWNER_CHANNEL, thread_ts=thread.ts)
    await world.settle()

    assert world.ledger.runs == [("expense", {"purpose": "taxi", "amount": 12.0})]
    question, *after = thread_posts(world)
    assert question == "Approval needed: Books an expense"
    assert after == ['Read "approved" as approve.', "booked the taxi"]


async def test_a_mention_starts_the_workflow_and_answers_in_its_thread(world: SlackWorld) -> None:
    world.llm.then_return("Nothing to do: all refunds are done.")

    response = await world.event(
        {
            "type": "app_mention",
            "user": OWNER,
            "text": f"<@{BOT_USER}> any refunds left?",
            "channel": OWNER_CHANNEL,
            "ts": "1700000300.000001",
        }
    )
    assert response.status == 200
    await world.settle()

    [posted] = world.stub.of("chat.postMessage")
    assert (posted.payload["channel"], posted.payload["thread_ts"]) == (
        OWNER_CHANNEL,
        "1700000300.000001",
    )
    assert posted.payload["text"] == "Nothing to do: all refunds are done."
    [call] = world.llm.calls
    assert "any refunds left?" in str(call.messages[-1].content)
    assert f"<@{BOT_USER}>" not in str(call.messages[-1].content)


async def test_a_mention_that_pauses_asks_in_the_thread_and_answers_after_the_click(
    world: SlackWorld,
) -> None:
    world.llm.then_return(
        call_tool(BookExpenseTool, {"purpose": "lunch", "amount": 40.0}), "Lunch is booked."
    )
    await world.event(
        {
            "type": "app_mention",
            "user": OWNER,
            "text": f"<@{BOT_USER}> book lunch",
            "channel": OWNER_CHANNEL,
            "ts": "1700000300.000001",
        }
    )
    await world.settle()
    [question] = world.stub.of("chat.postMessage")
    assert question.payload["thread_ts"] == "1700000300.000001"
    pause_id = str(buttons(question.blocks())[0]["value"])

    await world.click(OWNER, APPROVE_ACTION, pause_id, channel=OWNER_CHANNEL)
    await world.settle()

    assert world.ledger.runs == [("expense", {"purpose": "lunch", "amount": 40.0})]
    assert world.stub.of("chat.postMessage")[-1].payload["text"] == "Lunch is booked."
    assert world.stub.of("chat.postMessage")[-1].payload["thread_ts"] == "1700000300.000001"


async def test_a_failed_run_says_so_in_its_thread(world: SlackWorld) -> None:
    world.llm.then_return(RuntimeError("the model is down"))

    await world.event(
        {
            "type": "app_mention",
            "user": OWNER,
            "text": f"<@{BOT_USER}> refund 7",
            "channel": OWNER_CHANNEL,
            "ts": "1700000300.000001",
        }
    )
    await world.settle()

    [posted] = world.stub.of("chat.postMessage")
    assert posted.payload["text"].startswith(":warning: Sorry, this request failed")


async def test_a_direct_message_starts_the_workflow(world: SlackWorld) -> None:
    world.llm.then_return("Hello!")

    await world.message(OWNER, "hi there", channel="D0DIRECT", channel_type="im")
    await world.settle()

    [posted] = world.stub.of("chat.postMessage")
    assert (posted.payload["channel"], posted.payload["text"]) == ("D0DIRECT", "Hello!")


async def test_a_mention_in_a_waiting_thread_is_an_answer_not_new_work(world: SlackWorld) -> None:
    await ask_refund(world)
    text = f"<@{BOT_USER}> approve"
    mention = {
        "type": "app_mention",
        "user": MANAGER,
        "text": text,
        "channel": APPROVALS,
        "ts": "1700000400.000001",
        "thread_ts": FIRST_POST,
    }

    await world.event(mention)
    await world.message(MANAGER, text, thread_ts=FIRST_POST)
    await world.settle()

    assert len(world.ledger.runs) == 1
    assert len(world.llm.calls) == 2  # the refund run only: no new run
    assert thread_posts(world) == ['Read "approve" as approve.']


async def test_a_run_that_fails_after_the_answer_keeps_the_answer_and_says_so(
    world: SlackWorld,
) -> None:
    thread = SlackThread(team=TEAM, channel=OWNER_CHANNEL, ts="1699999999.000100")
    world.llm.then_return(
        call_tool(BookExpenseTool, {"purpose": "taxi", "amount": 12.0}),
        RuntimeError("the model is down"),
    )
    await world.execute("book a taxi", owner=OWNER, thread=thread)
    pause_id = str(buttons(world.stub.of("chat.postMessage")[0].blocks())[0]["value"])

    await world.click(OWNER, APPROVE_ACTION, pause_id, channel=OWNER_CHANNEL)
    await world.settle()

    assert world.ledger.runs == [("expense", {"purpose": "taxi", "amount": 12.0})]
    assert f"Approved* by <@{OWNER}>" in all_text(world.stub.of("chat.update")[0].blocks())
    assert thread_posts(world)[-1].startswith(":warning: Sorry, this request failed")
    assert world.stub.of("chat.postEphemeral") == []


async def test_a_reply_read_by_a_model_is_kept_before_the_ack_and_read_after_it(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model may take longer than Slack's 3 s: the reply is kept unread before the 200 (a
    crash then leaves it to the recovery sweep), read after it."""
    monkeypatch.setattr(answers, "reads_with_a_model", lambda runtime, record: True)
    calls: list[str] = []
    answer, read = App.answer, App.read_kept

    async def kept(self: App, *args: Any, **kwargs: Any) -> Any:
        outcome = await answer(self, *args, **kwargs)
        calls.append(type(outcome).__name__)
        return outcome

    async def read_after(self: App, received: Any, **kwargs: Any) -> Any:
        calls.append("read")
        return await read(self, received, **kwargs)

    monkeypatch.setattr(App, "answer", kept)
    monkeypatch.setattr(App, "read_kept", read_after)
    pause_id = await ask_refund(world)

    response = await world.message(MANAGER, "approve", thread_ts=FIRST_POST)
    assert response.status == 200
    assert calls[0] == "ReplyKept"  # before the 200
    await world.settle()

    assert calls == ["ReplyKept", "read", "Answered"]
    assert await status_of(world, pause_id) is PauseStatus.TAKEN
    assert len(world.ledger.runs) == 1
