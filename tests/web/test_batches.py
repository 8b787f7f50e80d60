"""The inbox's selection over HTTP: "Approve selected" / "Reject selected" settle each picked
question through ``App.answer_all`` with the web's rule of who may answer, and the page says
per question what happened. One answered elsewhere meanwhile is skipped; a retried post
answers nothing twice (each tool runs once); a question that is not the person's smuggled into
the form refuses the post with nothing answered."""

from __future__ import annotations

import html
import re
from pathlib import Path

from aiohttp import ClientSession

from bot import ExecutionStatus
from bot.testing import call_tool
from channels.kit.texts import (
    BATCH_NOT_YOURS,
    NOT_AN_APPROVER,
    PROPOSAL_CHANGED,
    batch_refused,
    batch_skipped,
)
from channels.web.render_batches import BATCH_PATH
from tests.four_eyes import WireTool
from tests.web.conftest import WebWorld, open_web_world
from tests.web.office import ALICE, BOB, OWNER, TENANT, PayOutTool, RefundCardTool
from tests.web.pages import csrf_of, open_page
from tests.web.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.web.test_browser import _need_chromium as need_chromium
from tests.web.test_four_eyes import FOUR_EYES, FourEyesAgent

ORDERS = [f"A-{n}" for n in range(1, 6)]
_PICK = re.compile(r'name="(pick-\d+)" id="pick-\d+" value="([^"]+)" aria-label="Select: ([^"]*)"')


async def _five_refunds(world: WebWorld, *more: object) -> None:
    calls = [call_tool(RefundCardTool, {"order_id": o, "amount": 10}) for o in ORDERS]
    result = await world.ask([*calls, *more], "done")
    assert result.status is ExecutionStatus.PAUSED


async def _inbox(http: ClientSession, world: WebWorld, who: str) -> str:
    await http.get(world.server.inbox_url(who, tenant_id=TENANT))
    status, page = await open_page(http, "/inbox")
    assert status == 200
    return page


def _picks(page: str) -> dict[str, str]:
    """The inbox's checkboxes: field name → value (a sealed question token)."""
    return {name: value for name, value, _ in _PICK.findall(page)}


def _batch_csrf(page: str) -> str:
    return csrf_of(page[page.index(f'action="{BATCH_PATH}"') :])


def _lines(page: str) -> list[str]:
    """What the batch did, one line per question (unescaped, tags stripped)."""
    section = page[page.index('class="batch-result"') :]
    section = section[: section.index("</section>")]
    items = re.findall(r"<li[^>]*>(.*?)</li>", section)
    return [html.unescape(re.sub(r"<[^>]+>", "", item)) for item in items]


async def _pause_of(world: WebWorld, order: str) -> str:
    pending = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
    [pause_id] = [p.pause_id for p in pending if p.ask.arguments.get("order_id") == order]
    assert pause_id is not None
    return pause_id


async def test_approve_selected_settles_each_once_and_skips_one_answered_elsewhere(
    web_world: WebWorld,
) -> None:
    world = web_world
    await _five_refunds(world)
    page = await _inbox(world.http, world, ALICE)
    picks = _picks(page)
    assert len(picks) == 5
    pause_ids = [await _pause_of(world, o) for o in ORDERS]
    assert all(pause_id not in page for pause_id in pause_ids)  # sealed, never in clear
    await world.app.answer(pause_ids[2], tenant_id=TENANT, by=BOB, decision={"approved": True})

    form = {"csrf": _batch_csrf(page), "action": "approve", "reason": "", **picks}
    response = await world.http.post(BATCH_PATH, data=form, allow_redirects=False)
    assert response.status == 200
    lines = _lines(await response.text())
    assert len(lines) == 5, lines
    assert lines.count("Refunds a card: Approved.") == 4
    assert lines.count(f"Refunds a card: {batch_skipped(f'Approved by {BOB}.')}") == 1, lines
    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ORDERS

    again = await world.http.post(BATCH_PATH, data=form, allow_redirects=False)  # a retry
    assert again.status == 200
    retried = _lines(await again.text())
    assert len(retried) == 5 and all("Already answered elsewhere, skipped" in r for r in retried)
    assert len(world.ledger.runs) == 5  # each tool once
    assert await world.app.list_pending(tenant_id=TENANT) == []


async def test_reject_selected_records_one_reason_for_each(web_world: WebWorld) -> None:
    world = web_world
    await _five_refunds(world)
    page = await _inbox(world.http, world, ALICE)
    chosen = dict(list(_picks(page).items())[:2])
    form = {"csrf": _batch_csrf(page), "action": "reject", "reason": "duplicate batch", **chosen}
    response = await world.http.post(BATCH_PATH, data=form, allow_redirects=False)
    shown = await response.text()
    assert response.status == 200
    assert _lines(shown) == ["Refunds a card: Rejected."] * 2
    decided = html.unescape(shown[shown.index("<h2>Decided</h2>") :])
    assert decided.count(f"Rejected by {ALICE}: duplicate batch") == 2
    assert len(_picks(shown)) == 3  # the rest still wait, each with its checkbox
    assert world.ledger.runs == []


async def test_a_question_not_theirs_smuggled_in_refuses_the_post_with_nothing_answered(
    web_world: WebWorld,
) -> None:
    world = web_world
    await _five_refunds(world, call_tool(PayOutTool, {"payee": "zed", "amount": 5}))
    page = await _inbox(world.http, world, ALICE)
    picks = _picks(page)
    assert len(picks) == 5  # the payout is Bob's: not in her inbox
    bobs = world.link(BOB, "pay-out-tool").rsplit("/", 1)[1]
    pending = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
    [payout] = [p for p in pending if p.ask.tool == "pay-out-tool"]
    assert payout.pause_id is not None
    csrf = _batch_csrf(page)

    for smuggled in (bobs, payout.pause_id, "x.y.z"):  # Bob's link, a bare id, a forgery
        form = {"csrf": csrf, "action": "approve", **picks, "pick-9": smuggled}
        response = await world.http.post(BATCH_PATH, data=form, allow_redirects=False)
        shown = html.unescape(await response.text())
        assert response.status == 403 and BATCH_NOT_YOURS in shown
        assert smuggled not in shown
    assert world.ledger.runs == []
    assert len(await world.app.list_pending(tenant_id=TENANT)) == 6

    # a link made out to her (the server's own) still meets the web's rule: refused, the why
    hers = world.server.outbox.question_url(payout.pause_id, approver=ALICE, tenant_id=TENANT)
    form = {"csrf": csrf, "action": "approve", "pick-0": picks["pick-0"]}
    form["pick-9"] = hers.rsplit("/", 1)[1]
    response = await world.http.post(BATCH_PATH, data=form, allow_redirects=False)
    lines = _lines(await response.text())
    assert response.status == 200 and lines[0] == "Refunds a card: Approved."
    assert lines[1].endswith(batch_refused(NOT_AN_APPROVER)), lines
    assert [name for name, _ in world.ledger.runs] == ["refund"]  # the payout still waits


async def test_a_batch_without_the_inbox_csrf_or_a_pick_answers_nothing(
    web_world: WebWorld,
) -> None:
    world = web_world
    await _five_refunds(world)
    page = await _inbox(world.http, world, ALICE)
    picks = _picks(page)
    forged = await world.http.post(
        BATCH_PATH, data={"csrf": "forged", "action": "approve", **picks}, allow_redirects=False
    )
    assert forged.status == 403
    empty = await world.http.post(
        BATCH_PATH, data={"csrf": _batch_csrf(page), "action": "approve"}, allow_redirects=False
    )
    assert empty.status == 422
    assert world.ledger.runs == [] and len(_picks(await empty.text())) == 5


async def test_an_approver_approves_a_selection_in_the_browser(web_world: WebWorld) -> None:
    need_chromium()
    from playwright.async_api import async_playwright, expect

    world = web_world
    await _five_refunds(world)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        page = await browser.new_page()
        errors: list[str] = []  # CSP violations are logged to the console
        page.on("console", lambda message: errors.append(message.text))
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(world.server.inbox_url(ALICE, tenant_id=TENANT))
        await expect(page.locator("ul.inbox li input.pick")).to_have_count(5)
        for order in ("A-2", "A-4"):
            await (
                page.locator("ul.inbox li", has_text=f"Order ID: {order} ·")
                .locator("input.pick")
                .check()
            )
        await page.get_by_role("button", name="Approve selected").click()
        await expect(page.locator(".batch-result li")).to_have_count(2)
        await expect(page.locator(".batch-result li").first).to_have_text(
            "Refunds a card: Approved."
        )
        await expect(page.locator("ul.inbox li input.pick")).to_have_count(3)

        await page.get_by_role("checkbox").first.check()
        await page.get_by_label("Reason for rejecting (one for all)").fill("not ours")
        await page.get_by_role("button", name="Reject selected").click()
        await expect(page.locator(".batch-result li")).to_have_text(["Refunds a card: Rejected."])
        await expect(page.locator("ul.inbox li input.pick")).to_have_count(2)
        await browser.close()

    assert [e for e in errors if "Failed to load resource" not in e] == []
    assert sorted(args["order_id"] for _, args in world.ledger.runs) == ["A-2", "A-4"]


async def test_a_selection_approves_the_proposal_the_inbox_showed_never_one_edited_since(
    tmp_path: Path,
) -> None:
    """What the approver was shown is what is checked, in the inbox's batch too: Alice's inbox
    lists two wires that need two approvals each, Bob edits one, then Alice's "Approve selected"
    from the page as it was refuses that wire (nothing counted) and counts the other."""
    application = (FOUR_EYES.application, FourEyesAgent, FOUR_EYES.workflow)
    async with open_web_world(tmp_path, application) as world:
        wires = [
            call_tool(WireTool, {"account": "DE-1", "amount": 25000.0}),
            call_tool(WireTool, {"account": "DE-2", "amount": 26000.0}),
        ]
        await world.ask(wires, "wired", owner=OWNER)
        page = await _inbox(world.http, world, ALICE)
        picks = _picks(page)
        assert len(picks) == 2 and all(v.endswith("~0") for v in picks.values())
        pending = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
        by_account = {p.ask.arguments["account"]: str(p.pause_id) for p in pending}
        edited = by_account["DE-1"]
        edit = {"approved": True, "override_arguments": {"account": "DE-1", "amount": 9.0}}
        await world.app.answer(edited, tenant_id=TENANT, by=BOB, decision=edit)

        form = {"csrf": _batch_csrf(page), "action": "approve", "reason": "", **picks}
        response = await world.http.post(BATCH_PATH, data=form, allow_redirects=False)
        assert response.status == 200
        lines = _lines(await response.text())
        assert sum(line.endswith(batch_refused(PROPOSAL_CHANGED)) for line in lines) == 1, lines
        first = await world.app.find_pause(edited, tenant_id=TENANT)
        second = await world.app.find_pause(by_account["DE-2"], tenant_id=TENANT)
        assert first is not None and [a.by for a in first.approvals] == [BOB]
        assert second is not None and [a.by for a in second.approvals] == [ALICE]
        assert world.ledger.runs == []
