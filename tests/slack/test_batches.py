"""``/pending``'s "Approve all" as signed requests against the Web API stub: its value seals
the listed pause ids for the person (none in clear); each question settles through
``App.answer_all`` with Slack's rule of who may answer and its own message is updated as for
a single answer; one answered on its own message meanwhile is skipped; a retried interaction
approves nothing twice; a value clicked by someone else, or forged, answers nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from channels.kit.texts import BATCH_NOT_YOURS, batch_skipped
from channels.slack.render import APPROVE_ACTION, APPROVE_ALL_ACTION
from tests.slack.checks import assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, STRANGER
from tests.slack.test_lists import ask_many_refunds, pending_of


def approve_all_of(sent: dict[str, Any]) -> Mapping[str, Any]:
    [button] = [b for b in buttons(sent["blocks"]) if b["action_id"] == APPROVE_ALL_ACTION]
    return button


def told(world: SlackWorld) -> list[str]:
    return [str(c.payload.get("text", "")) for c in world.stub.of("response_url")]


async def test_approve_all_settles_each_once_and_skips_one_answered_meanwhile(
    world: SlackWorld,
) -> None:
    ids = await ask_many_refunds(world, 5)
    button = approve_all_of(await pending_of(world, MANAGER))
    assert button["text"]["text"] == "Approve all 5"
    assert all(pause_id not in str(button["value"]) for pause_id in ids)  # sealed

    await world.click(MANAGER, APPROVE_ACTION, ids[2])  # on its own message, meanwhile
    await world.settle()
    assert len(world.ledger.runs) == 1

    response = await world.click(MANAGER, APPROVE_ALL_ACTION, str(button["value"]), ephemeral=True)
    assert response.status == 200
    await world.settle()
    assert sorted(str(args["order_id"]) for _, args in world.ledger.runs) == [
        str(i) for i in range(5)
    ]
    assert len(world.stub.of("chat.update")) == 5  # each question's own message, once
    [said] = [t for t in told(world) if "Approved." in t]
    assert said.count("Approved.") == 4
    assert said.count(batch_skipped("Approved by you.")) == 1

    retried = await world.click(  # Slack retries the same interaction
        MANAGER, APPROVE_ALL_ACTION, str(button["value"]), ephemeral=True
    )
    assert retried.status == 200
    await world.settle()
    assert len(world.ledger.runs) == 5  # each tool once
    assert len(world.stub.of("chat.update")) == 5
    assert told(world)[-2].count("Already answered elsewhere, skipped") == 5
    assert_sent_valid(world.stub.calls, set(ids))


async def test_an_approve_all_not_theirs_answers_nothing(world: SlackWorld) -> None:
    await ask_many_refunds(world, 3)
    button = approve_all_of(await pending_of(world, MANAGER))
    for value in (str(button["value"]), "k1.forged", str(button["value"])[:-4] + "AAAA"):
        await world.click(STRANGER, APPROVE_ALL_ACTION, value, ephemeral=True)
        await world.settle()
        assert told(world)[-1] == BATCH_NOT_YOURS
    await world.click(MANAGER, APPROVE_ALL_ACTION, "k1.forged", ephemeral=True)
    await world.settle()
    assert told(world)[-1] == BATCH_NOT_YOURS
    assert world.ledger.runs == []
    assert world.stub.of("chat.update") == []
