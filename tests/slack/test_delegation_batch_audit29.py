"""A standing delegation never lets its delegate answer their own request, in a batch either
(issue 29 audit), as signed requests against the Web API stub: the manager hands their
questions to someone who asked for one of them; that person's "Approve all" on /pending answers
the other and never their own, which still waits for the manager."""

from __future__ import annotations

from datetime import timedelta

from bot import PauseStatus
from bot.testing import call_tool
from channels.slack.button_values import read_answer_value
from channels.slack.render import APPROVE_ACTION, APPROVE_ALL_ACTION
from tests.slack.batch_picks import ask_each, batch_button
from tests.slack.checks import assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, STRANGER, RefundCardTool
from tests.slack.stub import TEAM
from tests.slack.test_lists import pending_of


async def test_a_delegates_batch_never_answers_their_own_request(world: SlackWorld) -> None:
    [own] = await ask_each(
        world, [call_tool(RefundCardTool, {"order_id": "0", "amount": 1.0})], owner=STRANGER
    )
    others = await ask_each(
        world, [call_tool(RefundCardTool, {"order_id": str(i), "amount": 2.0}) for i in (1, 2)]
    )
    world.llm.then_return("done", "done", "done")
    await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=timedelta(hours=1)
    )
    blocks = (await pending_of(world, STRANGER))["blocks"]
    listed = {read_answer_value(str(b["value"])).pause_id for b in buttons(blocks)
              if str(b["action_id"]).startswith(f"{APPROVE_ACTION}:")}  # fmt: skip
    assert listed == set(others)  # their own request is not theirs to answer: not listed
    await world.click(
        STRANGER, APPROVE_ALL_ACTION, str(batch_button(blocks, "batch")["value"]), ephemeral=True
    )
    await world.settle()

    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ["1", "2"]
    mine = await world.app.find_pause(own, tenant_id=TEAM)
    assert mine is not None and mine.status is PauseStatus.PENDING
    for other in others:
        theirs = await world.app.find_pause(other, tenant_id=TEAM)
        assert theirs is not None and theirs.responder == STRANGER

    own_value = str(buttons(world.stub.of("chat.postMessage")[0].blocks())[0]["value"])
    await world.click(STRANGER, APPROVE_ACTION, own_value)  # nor by its own button
    await world.settle()
    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ["1", "2"]
    assert world.stub.of("chat.postEphemeral")[-1].payload["user"] == STRANGER

    assert await world.app.answer(  # the manager still answers it
        own, tenant_id=TEAM, by=MANAGER, decision={"approved": True}
    )
    await world.settle()
    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ["0", "1", "2"]
    assert_sent_valid(world.stub.calls, {own, *others})
