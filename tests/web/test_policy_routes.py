"""A policy's route on the web (issue 28): a big payout is told to the approver the policy
named (Carol), not to the channel's (Bob); only she may answer it on its page, and her inbox
lists it while Bob's does not."""

from __future__ import annotations

from bot.testing import call_tool
from tests.web.conftest import WebWorld
from tests.web.office import BOB, CAROL, TENANT, RoutedPayOutTool
from tests.web.pages import answer, open_page

TOOL = "routed-pay-out-tool"


async def test_a_routed_payout_is_asked_of_the_routed_approver_only(web_world: WebWorld) -> None:
    await web_world.ask(call_tool(RoutedPayOutTool, {"payee": "ann", "amount": 700}), "paid")
    assert [n.approver for n in web_world.notices if n.tool == TOOL] == [CAROL]

    # Bob, the channel's approver, signed in by his inbox link: nothing listed, refused
    bob = web_world.client()
    try:
        await bob.get(web_world.server.inbox_url(BOB, tenant_id=TENANT))
        _, inbox = await open_page(bob, "/inbox")
        assert "Pays a payee out; big payouts" not in inbox
    finally:
        await bob.close()

    path = web_world.link(CAROL, TOOL)
    await open_page(web_world.http, path)  # signs Carol in
    _, carol_inbox = await open_page(web_world.http, "/inbox")
    assert "Pays a payee out; big payouts" in carol_inbox
    status, page = await answer(web_world.http, path, "approve")
    assert status == 303, page
    assert [args["amount"] for _, args in web_world.ledger.runs] == [700.0]


async def test_a_small_payout_is_asked_as_its_channel_asks(web_world: WebWorld) -> None:
    await web_world.ask(call_tool(RoutedPayOutTool, {"payee": "ann", "amount": 70}))
    assert [n.approver for n in web_world.notices if n.tool == TOOL] == [BOB]
