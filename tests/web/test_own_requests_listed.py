"""A requester who approves a role that separates duties is not offered their own request on
the web (issue 29, "the requester never counts"): the notifier does not tell them and their
inbox does not list it, nor does a standing delegation to them bring it back; the other
approver is told and lists it. A role that does not separate duties still tells and lists the
requester-approver, and their answer counts (the runtime's rule)."""

from __future__ import annotations

from datetime import timedelta

from bot.testing import call_tool
from tests.web.conftest import WebWorld
from tests.web.office import ALICE, BOB, OWNER, TENANT, RefundCardTool, WireMoneyTool
from tests.web.pages import answer
from tests.web.test_batches import _inbox

WIRE = {"iban": "DE02", "amount": 900}


async def test_the_requesters_own_wire_is_neither_told_nor_listed(web_world: WebWorld) -> None:
    await web_world.ask(call_tool(WireMoneyTool, WIRE), "wired", owner=OWNER)
    assert [n.approver for n in web_world.notices] == [ALICE]  # OWNER approves wires too
    async with web_world.client() as olga:
        assert "DE02" not in await _inbox(olga, web_world, OWNER)
    assert "DE02" in await _inbox(web_world.http, web_world, ALICE)


async def test_a_delegation_to_the_requester_does_not_list_their_own_wire(
    web_world: WebWorld,
) -> None:
    await web_world.ask(call_tool(WireMoneyTool, WIRE), "wired", owner=OWNER)
    await web_world.app.delegate(
        tenant_id=TENANT, delegator=ALICE, delegate=OWNER, ends_in=timedelta(hours=8)
    )
    async with web_world.client() as olga:
        assert "DE02" not in await _inbox(olga, web_world, OWNER)


async def test_a_role_without_separation_of_duties_still_tells_and_lists_it(
    web_world: WebWorld,
) -> None:
    await web_world.ask(
        call_tool(RefundCardTool, {"order_id": "A-77", "amount": 40}), "done", owner=BOB
    )
    assert [n.approver for n in web_world.notices] == [ALICE, BOB]  # BOB asked, BOB approves
    async with web_world.client() as bob:
        assert "A-77" in await _inbox(bob, web_world, BOB)
        status, _ = await answer(bob, web_world.link(BOB, "refund-card-tool"), "approve")
    assert status == 303
    assert [name for name, _ in web_world.ledger.runs] == ["refund"]
