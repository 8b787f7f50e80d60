"""Approve and allow similar, then revoke from the inbox, in headless Chromium (the page's
form and the inbox's Revoke form as a person uses them; no console error, so nothing the
Content-Security-Policy refused). Skipped without Chromium as ``test_browser`` is."""

from __future__ import annotations

from bot.testing import call_tool
from tests.web.conftest import WebWorld
from tests.web.office import BOB, TENANT, GrantedPayOutTool
from tests.web.test_browser import CHROMIUM, CHROMIUM_ARGS, _need_chromium


async def test_a_grant_is_given_on_the_page_and_revoked_in_the_inbox(web_world: WebWorld) -> None:
    _need_chromium()
    from playwright.async_api import async_playwright, expect

    await web_world.ask(call_tool(GrantedPayOutTool, {"payee": "ann", "amount": 120}), "paid")
    question = f"{web_world.base_url}{web_world.link(BOB, 'granted-pay-out-tool')}"

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        page = await browser.new_page()
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text))
        page.on("pageerror", lambda error: errors.append(str(error)))

        await page.goto(question)
        await page.get_by_label("for requests of olga").check()
        await page.get_by_label("For how long").select_option("24")
        await page.get_by_label("Up to this Amount").fill("200")
        await page.get_by_role("button", name="Approve and allow").click()
        await expect(page.get_by_role("status")).to_contain_text(
            "Approved, and similar requests are allowed: granted-pay-out-tool"
        )

        await page.goto(f"{web_world.base_url}/inbox")
        grants = page.locator("ul.grants li")
        await expect(grants).to_have_count(1)
        await expect(grants).to_contain_text("for requests of olga, amount ≤ 200.00")
        await grants.get_by_role("button", name="Revoke").click()
        await expect(
            page.get_by_text("No standing grants: every request is asked.")
        ).to_be_visible()
        await browser.close()

    assert [e for e in errors if "Failed to load resource" not in e] == []
    assert [args["amount"] for _, args in web_world.ledger.runs] == [120.0]
    assert await web_world.app.list_grants(tenant_id=TENANT) == []
