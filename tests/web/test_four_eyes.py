"""Two approvers for one wire on the web page (``required_approvals=2``), over HTTP and once in
Chromium: each approval is shown with how many more are needed and the forms stay for the
others; the same person's second approval and the requester's are refused; an edit replaces
what the others approve."""

from __future__ import annotations

from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path

import pytest

from bot.testing import call_tool
from channels.kit.texts import ALREADY_APPROVED, PROPOSAL_CHANGED, SELF_APPROVAL
from channels.web import web_channel
from tests.apps import sample_agent, sample_application
from tests.four_eyes import WIRE, WireApprovalChannel, WireTool
from tests.web.conftest import WebWorld, open_web_world
from tests.web.office import ALICE, BOB, CAROL, OWNER
from tests.web.own_links import link_for
from tests.web.pages import answer, csrf_of, has_forms, open_page, post
from tests.web.test_browser import CHROMIUM, CHROMIUM_ARGS, _need_chromium

WebFourEyesWireChannel = web_channel(
    WireApprovalChannel,
    name="web-four-eyes-wire-approval-channel",
    approvers=[ALICE, BOB, CAROL, OWNER],
)
FourEyesAgent = sample_agent("web-four-eyes", tools=[WireTool], description="Wires money")
FOUR_EYES = sample_application(
    "web-four-eyes", agent=FourEyesAgent, channels=[WebFourEyesWireChannel]
)


@pytest.fixture
async def four_eyes(tmp_path: Path) -> AsyncIterator[WebWorld]:
    application = (FOUR_EYES.application, FourEyesAgent, FOUR_EYES.workflow)
    async with open_web_world(tmp_path, application) as world:
        yield world


async def _asked(world: WebWorld) -> None:
    await world.ask(call_tool(WireTool, WIRE), "wired", owner=OWNER)
    # the requester approves the role too, but four eyes refuse them: they are not told
    assert sorted(n.approver for n in world.notices) == sorted([ALICE, BOB, CAROL])


async def test_each_approval_is_shown_and_the_second_distinct_one_runs_the_wire(
    four_eyes: WebWorld,
) -> None:
    world = four_eyes
    await _asked(world)
    path = world.link(ALICE, "wire-tool")
    status, page = await open_page(world.http, path)
    assert status == 200 and "Needs 2 approvals, each by a different person." in page

    status, page = await answer(world.http, path, "approve")
    assert status == 303
    assert f"Approved by {ALICE} · 1 of 2 needed" in unescape(page)
    assert has_forms(page) and world.ledger.runs == []

    status, page = await answer(world.http, path, "approve")  # Alice again
    assert status == 403 and ALREADY_APPROVED in unescape(page)

    async with world.client() as olga:  # the requester, an approver of the role too
        status, page = await answer(olga, await link_for(world, OWNER), "approve")
        assert status == 403 and SELF_APPROVAL in unescape(page)

    async with world.client() as bob:
        status, page = await answer(bob, world.link(BOB, "wire-tool"), "approve")
        assert status == 303 and not has_forms(page)
        assert f"Approved by {ALICE} and you · 2 of 2." in unescape(page)  # every approver
    assert world.ledger.runs == [("wire", WIRE)]

    async with world.client() as carol:  # after the second: answered, no forms
        status, page = await open_page(carol, world.link(CAROL, "wire-tool"))
        assert status == 200 and not has_forms(page)
        assert f"Approved by {ALICE} and {BOB} · 2 of 2." in unescape(page)
    assert world.ledger.runs == [("wire", WIRE)]


async def test_an_edit_after_one_approval_is_what_the_next_approver_sees_and_approves(
    four_eyes: WebWorld,
) -> None:
    world = four_eyes
    await _asked(world)
    status, _ = await answer(world.http, world.link(ALICE, "wire-tool"), "approve")
    assert status == 303

    async with world.client() as bob:
        status, page = await answer(
            bob,
            world.link(BOB, "wire-tool"),
            "edit",
            **{"arg.account": "DE-1", "arg.amount": "20000"},
        )
        assert status == 303, page
        shown = unescape(page)
        assert "25,000.00 → 20,000.00" in shown
        assert f"Changed by {BOB}: earlier approvals no longer count" in shown
        assert f"Approved by {BOB} · 1 of 2 needed" in shown

    status, page = await open_page(world.http, world.link(ALICE, "wire-tool"))
    assert "20,000.00" in page and f"Approved by {BOB}" in unescape(page)
    status, page = await answer(world.http, world.link(ALICE, "wire-tool"), "approve")
    assert status == 303 and not has_forms(page)
    assert f"Approved with changes by {BOB} and you · 2 of 2." in unescape(page)  # counted ones
    assert world.ledger.runs == [("wire", {**WIRE, "amount": 20000.0})]


async def test_two_approvers_in_the_browser(four_eyes: WebWorld) -> None:
    _need_chromium()
    from playwright.async_api import async_playwright, expect

    world = four_eyes
    await _asked(world)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        errors: list[str] = []
        for approver, shown in ((ALICE, f"Approved by {ALICE} · 1 of 2 needed"), (BOB, None)):
            context = await browser.new_context()  # each approver's own browser
            page = await context.new_page()
            page.on("console", lambda message: errors.append(message.text))
            await page.goto(world.base_url + world.link(approver, "wire-tool"))
            await page.get_by_role("button", name="Approve", exact=True).click()
            if shown is not None:
                await expect(page.locator("p.approvals")).to_have_text(shown)
                await expect(page.get_by_role("button", name="Approve", exact=True)).to_be_visible()
            else:
                await expect(page.get_by_role("status")).to_have_text(
                    f"Approved by {ALICE} and you · 2 of 2."
                )
                await expect(page.locator("form")).to_have_count(0)
            await context.close()
        await browser.close()
    assert [e for e in errors if "Failed to load resource" not in e] == []
    assert world.ledger.runs == [("wire", WIRE)]


async def test_an_approval_of_a_page_an_edit_replaced_meanwhile_is_refused(
    four_eyes: WebWorld,
) -> None:
    world = four_eyes
    await _asked(world)
    path = world.link(ALICE, "wire-tool")
    status, stale = await open_page(world.http, path)  # Alice reads 25,000.00
    assert 'name="shown" value="0"' in stale

    async with world.client() as bob:  # meanwhile Bob changes it
        status, _ = await answer(
            bob, world.link(BOB, "wire-tool"), "edit", **{"arg.account": "DE-1", "arg.amount": "1"}
        )
        assert status == 303

    refused = await post(world.http, path, "approve", csrf_of(stale), shown="0")
    page = await refused.text()
    assert refused.status == 403 and PROPOSAL_CHANGED in unescape(page)
    assert "1.00" in page and 'name="shown" value="1"' in page  # the page now shows the new one
    pause = (await world.app.list_pending(tenant_id="acme", include_channel_pause_ids=True))[0]
    assert pause.pause_id is not None
    seen = await world.app.find_pause(pause.pause_id, tenant_id="acme")
    assert seen is not None and [a.by for a in seen.approvals if a.counted] == [BOB]

    status, page = await answer(world.http, path, "approve")  # what she sees now: counted
    assert status == 303 and world.ledger.runs == [("wire", {**WIRE, "amount": 1.0})]
