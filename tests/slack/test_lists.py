"""``/pending`` and the App Home: what waits for the caller, with its buttons, in pages."""

from __future__ import annotations

import json
from typing import Any

from bot import ExecutionStatus
from bot.testing import call_tool
from channels.slack.render import APPROVE_ACTION
from channels.slack.render_delegations import START_DELEGATION_ACTION
from channels.slack.render_pending import EMPTY_LIST, NEXT_PAGE_ACTION
from channels.slack.threads import SlackThread
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import OWNER_CHANNEL, SlackWorld
from tests.slack.office import (
    ACCOUNTANT,
    FINANCE,
    MANAGER,
    OWNER,
    SECRET_EMAIL,
    STRANGER,
    BookExpenseTool,
    RefundCardTool,
)
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund


def approve_values(blocks: list[dict[str, Any]]) -> list[str]:
    return [
        str(b["value"]) for b in buttons(blocks) if str(b["action_id"]).startswith(APPROVE_ACTION)
    ]


async def pending_of(world: SlackWorld, user: str, text: str = "") -> dict[str, Any]:
    response = await world.command(user, text)
    assert response.status == 200
    await world.settle()
    sent = world.stub.of("response_url")[-1].payload
    assert sent["response_type"] == "ephemeral"
    return sent


async def ask_many_refunds(world: SlackWorld, count: int) -> list[str]:
    """``count`` refund questions, each from a request of its own (so each its own message:
    the questions of one model turn share one, ``tests/slack/test_turn_messages.py``)."""
    for i in range(count):
        world.llm.then_return(call_tool(RefundCardTool, {"order_id": str(i), "amount": 1.0 + i}))
        result = await world.execute(f"refund order {i}")
        assert result.status is ExecutionStatus.PAUSED
    return [str(buttons(c.blocks())[0]["value"]) for c in world.stub.of("chat.postMessage")]


async def test_nothing_waiting_is_a_friendly_line(world: SlackWorld) -> None:
    sent = await pending_of(world, MANAGER)

    assert sent["text"] == EMPTY_LIST
    assert buttons(sent["blocks"]) == []


async def test_an_approver_sees_the_question_with_its_buttons(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    sent = await pending_of(world, MANAGER)

    assert approve_values(sent["blocks"]) == [pause_id]
    shown = all_text(sent["blocks"])
    assert f"*Refunds a card* · asked by <@{OWNER}> through slack-office-agent" in shown
    assert "A manager approves card refunds" in shown
    assert SECRET_EMAIL not in json.dumps(sent)
    assert (await pending_of(world, STRANGER))["text"] == EMPTY_LIST
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_group_members_and_owners_see_theirs(world: SlackWorld) -> None:
    world.stub.groups[FINANCE] = [ACCOUNTANT]
    refund = await ask_refund(world, final=None)
    world.llm.then_return(call_tool(BookExpenseTool, {"purpose": "taxi", "amount": 9.0}), "ok")
    thread = SlackThread(team=TEAM, channel=OWNER_CHANNEL, ts="1699999999.000001")
    await world.execute("taxi", owner=OWNER, thread=thread)
    expense = str(buttons(world.stub.of("chat.postMessage")[-1].blocks())[0]["value"])

    assert approve_values((await pending_of(world, ACCOUNTANT))["blocks"]) == [refund]
    assert approve_values((await pending_of(world, OWNER))["blocks"]) == [expense]


async def test_a_command_text_with_the_word_payload_still_lists(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    sent = await pending_of(world, MANAGER, text="show the payload please")

    assert approve_values(sent["blocks"]) == [pause_id]


async def test_twenty_five_questions_come_in_pages_of_ten(world: SlackWorld) -> None:
    ids = await ask_many_refunds(world, 25)

    first = await pending_of(world, MANAGER)
    assert len(approve_values(first["blocks"])) == 10
    assert "page 1 of 3" in all_text(first["blocks"])
    [next_button] = [b for b in buttons(first["blocks"]) if b["action_id"] == NEXT_PAGE_ACTION]

    response = await world.click(
        MANAGER, NEXT_PAGE_ACTION, str(next_button["value"]), ephemeral=True
    )
    assert response.status == 200
    await world.settle()

    second = world.stub.of("response_url")[-1].payload
    assert second["replace_original"] is True
    assert "page 2 of 3" in all_text(second["blocks"])
    shown = approve_values(first["blocks"]) + approve_values(second["blocks"])
    assert len(set(shown)) == 20 and set(shown) <= set(ids)
    assert_sent_valid(world.stub.calls, set(ids))


async def test_approving_from_the_list_answers_and_refreshes_it(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    await pending_of(world, MANAGER)

    await world.click(MANAGER, f"{APPROVE_ACTION}:0", pause_id, ephemeral=True)
    await world.settle()

    assert len(world.ledger.runs) == 1
    assert len(world.stub.of("chat.update")) == 1  # the approval message itself
    refreshed = world.stub.of("response_url")[-1].payload
    assert refreshed["text"] == EMPTY_LIST and refreshed["replace_original"] is True


def is_empty_list(blocks: list[dict[str, Any]]) -> bool:
    """Nothing waits (the Home's button to hand questions on is always there)."""
    answers = [b for b in buttons(blocks) if b["action_id"] != START_DELEGATION_ACTION]
    return EMPTY_LIST in all_text(blocks) and answers == []


async def home_opened(world: SlackWorld, user: str) -> None:
    await world.event({"type": "app_home_opened", "user": user, "channel": "D0HOME", "tab": "home"})
    await world.settle()


async def test_the_home_tab_shows_the_list_and_follows_its_changes(world: SlackWorld) -> None:
    await home_opened(world, MANAGER)
    [empty] = world.stub.of("views.publish")
    assert empty.payload["user_id"] == MANAGER
    assert is_empty_list(empty.view()["blocks"])

    pause_id = await ask_refund(world)
    await world.settle()
    published = world.stub.of("views.publish")
    assert len(published) == 2
    assert approve_values(published[-1].view()["blocks"]) == [pause_id]

    await world.click(MANAGER, APPROVE_ACTION, pause_id, home=True)
    await world.settle()
    assert len(world.ledger.runs) == 1
    assert is_empty_list(world.stub.of("views.publish")[-1].view()["blocks"])
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_only_users_who_opened_their_home_are_refreshed(world: SlackWorld) -> None:
    await home_opened(world, STRANGER)
    await ask_refund(world)
    await world.settle()

    assert [c.payload["user_id"] for c in world.stub.of("views.publish")] == [STRANGER]


async def test_a_refusal_from_the_home_comes_as_a_direct_message(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)

    await world.click(STRANGER, APPROVE_ACTION, pause_id, home=True)
    await world.settle()

    [told] = [c for c in world.stub.of("chat.postMessage") if c.payload["channel"] == STRANGER]
    assert "not one of the approvers" in told.payload["text"]
