"""What an approver reads, in Chromium: the question page, the inbox and an answered page.

The screenshots are kept as test artifacts in ``tests/artifacts/`` (git-ignored):
``web-question.png``, ``web-inbox.png``, ``web-answered.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from bot.testing import call_tool
from tests.web.conftest import WebWorld
from tests.web.office import ALICE, TENANT, RefundCardTool
from tests.web.test_browser import CHROMIUM, CHROMIUM_ARGS, _need_chromium

ARTIFACTS: Final = Path(__file__).resolve().parents[1] / "artifacts"


async def test_the_question_the_inbox_and_the_outcome_read_as_a_person_needs(
    web_world: WebWorld,
) -> None:
    _need_chromium()
    from playwright.async_api import async_playwright, expect

    ARTIFACTS.mkdir(exist_ok=True)
    await web_world.ask(
        [
            call_tool(RefundCardTool, {"order_id": "A-1001", "amount": 1234.5}),
            call_tool(RefundCardTool, {"order_id": "A-1002", "amount": 120}),
        ],
        "all answered",
    )
    inbox = web_world.server.inbox_url(ALICE, tenant_id=TENANT)

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        page = await browser.new_page(viewport={"width": 900, "height": 900})
        await page.goto(inbox)
        await page.locator("ul.inbox li", has_text="Order ID: A-1001 ·").get_by_role("link").click()

        shown = await page.locator("main").inner_text()
        assert "refund-card-tool" not in shown  # no tool id
        assert "You answer as" not in shown
        assert "Order ID" in shown and "1,234.50" in shown  # titled and formatted as in Slack
        assert "Asked by olga through" in shown and " UTC" in shown  # who, and the time zone
        await page.screenshot(path=str(ARTIFACTS / "web-question.png"), full_page=True)

        await page.get_by_label("Amount").fill("1,000.00")  # typed as shown
        await page.get_by_role("button", name="Approve with these values").click()
        await expect(page.get_by_role("status")).to_have_text("Approved with changes by you.")
        outcome = await page.locator("section.outcome").inner_text()
        assert "What changed" in outcome and "1,234.50 → 1,000.00" in outcome
        assert "What ran" in outcome and "1,000.00" in outcome
        assert await page.locator("section.outcome.tone-approved").count() == 1
        await page.screenshot(path=str(ARTIFACTS / "web-answered.png"), full_page=True)

        await page.goto(f"{web_world.base_url}/inbox")
        waiting = await page.locator("ul.inbox").first.inner_text()
        assert "Order ID: A-1002 · Amount: 120.00" in waiting and "Asked by olga" in waiting
        decided = await page.locator("ul.decided").inner_text()
        assert "Approved with changes by alice@example.com" in decided
        assert "What ran: Order ID: A-1001 · Amount: 1,000.00" in decided
        await page.screenshot(path=str(ARTIFACTS / "web-inbox.png"), full_page=True)
        await browser.close()
