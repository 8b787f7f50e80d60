"""A requester who approves a role that separates duties is not offered their own request
(issue 29, "the requester never counts"): neither ``/pending`` nor the App Home lists it for
them, a reminder does not mention them, and a standing delegation to them does not bring it
back; the others who approve it still see it. A role that does not separate duties still lists
the requester's own question to them, and their answer counts (the runtime's rule), as signed
requests against the Web API stub."""

from __future__ import annotations

from datetime import timedelta

from bot import ExecutionStatus
from bot.testing import call_tool
from channels.kit.waiting import waiting_for
from channels.slack.catalog import Catalog
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import ACCOUNTANT, FINANCE, MANAGER, RefundCardTool, WireMoneyTool
from tests.slack.stub import TEAM
from tests.slack.test_lists import approve_values, home_opened, is_empty_list, pending_of

HOUR = timedelta(hours=1)


async def _asked_by(world: SlackWorld, tool: type, arguments: dict[str, object], owner: str) -> str:
    world.llm.then_return(call_tool(tool, arguments), "done")
    result = await world.execute("do it", owner=owner)
    assert result.status is ExecutionStatus.PAUSED
    posted = world.stub.of("chat.postMessage")[-1]
    return str(buttons(posted.blocks())[0]["value"])


async def _wire_by(world: SlackWorld, owner: str) -> str:
    return await _asked_by(world, WireMoneyTool, {"iban": "DE00", "amount": 5.0}, owner)


async def test_pending_and_home_leave_out_the_requesters_own_wire(world: SlackWorld) -> None:
    world.stub.groups[FINANCE] = [ACCOUNTANT]
    await home_opened(world, MANAGER)
    await home_opened(world, ACCOUNTANT)
    pause_id = await _wire_by(world, MANAGER)  # the manager approves wires, and asks for one
    await world.settle()

    assert approve_values((await pending_of(world, MANAGER))["blocks"]) == []
    assert approve_values((await pending_of(world, ACCOUNTANT))["blocks"]) == [pause_id]
    homes = {c.payload["user_id"]: c.view()["blocks"] for c in world.stub.of("views.publish")}
    assert is_empty_list(homes[MANAGER])
    assert approve_values(homes[ACCOUNTANT]) == [pause_id]
    assert_sent_valid(world.stub.calls, {pause_id})


async def test_a_reminder_does_not_mention_the_requester(world: SlackWorld) -> None:
    world.stub.groups[FINANCE] = [ACCOUNTANT]
    await _wire_by(world, MANAGER)
    await world.clock.advance(timedelta(seconds=5))
    await world.clock.advance(HOUR)
    await world.settle()
    [reminder] = world.stub.of("chat.postMessage")[1:]
    text = str(reminder.payload["text"])
    assert f"<!subteam^{FINANCE}>" in text and f"<@{MANAGER}>" not in text


async def test_a_delegation_to_the_requester_does_not_list_their_own_wire(
    world: SlackWorld,
) -> None:
    world.stub.groups[FINANCE] = [ACCOUNTANT]
    own = await _wire_by(world, ACCOUNTANT)  # an approver through FINANCE asks for it
    await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=ACCOUNTANT, ends_in=timedelta(hours=8)
    )
    assert approve_values((await pending_of(world, ACCOUNTANT))["blocks"]) == []
    assert approve_values((await pending_of(world, MANAGER))["blocks"]) == [own]

    async def among(people: object) -> bool:  # the kit's rule itself, for any channel
        return True

    listed = await waiting_for(
        world.app, Catalog(world.app), tenant_id=TEAM, person=ACCOUNTANT, among=among
    )
    assert listed == []


async def test_a_role_without_separation_of_duties_still_lists_and_takes_it(
    world: SlackWorld,
) -> None:
    pause_id = await _asked_by(world, RefundCardTool, {"order_id": "7", "amount": 3.0}, MANAGER)
    assert approve_values((await pending_of(world, MANAGER))["blocks"]) == [pause_id]
    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    assert [name for name, _ in world.ledger.runs] == ["refund"]
