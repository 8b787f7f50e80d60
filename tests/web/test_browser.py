"""The web channel in a real browser: headless Chromium (Debian's package), driven by Playwright.

Skipped when ``/usr/bin/chromium`` is absent, unless ``COUNTERSIGN_REQUIRE_BROWSER=1`` (CI sets
it, and ``.ci/run`` installs Chromium). A screenshot of the question page is kept in the test's
folder (and copied to ``/tmp/web-question.png``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Final

import pytest

from bot.testing import call_tool
from tests.langgraph.kit import contents_of_tool_messages
from tests.web.conftest import WebWorld
from tests.web.graphs import attach_refunds
from tests.web.office import ALICE, SECRET_EMAIL, TENANT, RefundCardTool

CHROMIUM: Final = Path("/usr/bin/chromium")
CHROMIUM_ARGS: Final = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT_COPY: Final = Path("/tmp/web-question.png")


def _need_chromium() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("COUNTERSIGN_REQUIRE_BROWSER") == "1":
        pytest.fail(
            f"{CHROMIUM} is missing and COUNTERSIGN_REQUIRE_BROWSER=1: apt-get install chromium"
        )
    pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install chromium)")


async def test_an_approver_answers_four_requests_in_the_browser(
    web_world: WebWorld, tmp_path: Path
) -> None:
    _need_chromium()
    from playwright.async_api import async_playwright, expect

    await web_world.ask(
        [call_tool(RefundCardTool, {"order_id": f"A-{n}", "amount": 10 * n}) for n in range(1, 5)],
        "all answered",
    )
    inbox = web_world.server.inbox_url(ALICE, tenant_id=TENANT)

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        page = await browser.new_page()
        errors: list[str] = []  # CSP violations are logged to the console
        page.on("console", lambda message: errors.append(message.text))
        page.on("pageerror", lambda error: errors.append(str(error)))

        async def open_request(order: str) -> None:
            await page.goto(f"{web_world.base_url}/inbox")
            await (
                page.locator("ul.inbox li", has_text=f"Order ID: {order} ·")
                .get_by_role("link")
                .click()
            )
            await expect(page.locator("h1")).to_have_text("Refunds a card")

        await page.goto(inbox)
        await expect(page.locator("ul.inbox li")).to_have_count(4)

        # 1: approve
        await open_request("A-1")
        shot = tmp_path / "question.png"
        await page.screenshot(path=str(shot), full_page=True)
        shutil.copyfile(shot, SCREENSHOT_COPY)
        assert SECRET_EMAIL not in await page.content()
        await page.get_by_role("button", name="Approve", exact=True).click()
        await expect(page.get_by_role("status")).to_have_text("Approved by you.")
        await expect(page.locator("form")).to_have_count(0)

        # 2: reject with a reason
        await open_request("A-2")
        await page.get_by_label("Reason for rejecting").fill("duplicate order")
        await page.get_by_role("button", name="Reject").click()
        await expect(page.get_by_role("status")).to_have_text("Rejected by you: duplicate order")

        # 3: edit and approve, one invalid field first
        await open_request("A-3")
        await page.get_by_label("Amount").fill("-1")
        await page.get_by_role("button", name="Approve with these values").click()
        await expect(page.locator("#f-amount-error")).to_contain_text("greater than 0")
        await expect(page.get_by_label("Amount")).to_have_value("-1")
        await page.get_by_label("Amount").fill("25.5")
        await page.get_by_role("button", name="Approve with these values").click()
        await expect(page.get_by_role("status")).to_have_text("Approved with changes by you.")

        # 4: free text, not understood first
        await open_request("A-4")
        await page.get_by_label("Your answer").fill("approve if it is under 50")
        await page.get_by_role("button", name="Send").click()
        await expect(page.get_by_role("status")).to_contain_text("Not understood")
        await page.get_by_label("Your answer").fill("lgtm")
        await page.get_by_role("button", name="Send").click()
        await expect(page.get_by_role("status")).to_have_text("Approved by you.")

        await page.goto(f"{web_world.base_url}/inbox")
        await expect(page.get_by_text("Nothing waits for you.")).to_be_visible()
        await browser.close()

    # the 422s (invalid field, not understood) and the favicon's 404 are logged too: not ours
    assert [e for e in errors if "Failed to load resource" not in e] == []
    assert sorted(web_world.ledger.runs, key=lambda run: str(run[1]["order_id"])) == [
        ("refund", {"order_id": "A-1", "amount": 10.0, "email": SECRET_EMAIL}),
        ("refund", {"order_id": "A-3", "amount": 25.5, "email": SECRET_EMAIL}),
        ("refund", {"order_id": "A-4", "amount": 40.0, "email": SECRET_EMAIL}),
    ]


async def test_an_approver_answers_instead_of_an_agents_tool_in_the_browser(
    web_world: WebWorld,
) -> None:
    _need_chromium()
    from playwright.async_api import async_playwright, expect

    refunds, model, path = await attach_refunds(web_world, ("approve", "respond"))
    answer = "Order 7 was refunded yesterday."

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        page = await browser.new_page()
        await page.goto(f"{web_world.base_url}{path}")
        await expect(page.get_by_role("button", name="Reject")).to_have_count(0)
        await expect(page.get_by_role("button", name="Approve with these values")).to_have_count(0)
        await page.get_by_label("Your answer, in place of the tool").fill(answer)
        await page.get_by_role("button", name="Answer instead").click()
        await expect(page.get_by_role("status")).to_have_text(
            f"Answered instead of the tool by you: {answer}"
        )
        await expect(page.locator("form")).to_have_count(0)
        await browser.close()

    assert refunds.runs == []
    assert contents_of_tool_messages(model) == [answer]


async def test_an_emptied_amount_is_its_error_and_money_as_shown_is_read_back(
    web_world: WebWorld,
) -> None:
    """Clearing Amount once approved the amount asked for; the reason the refund role requires
    is required by the page too (the browser does not post the form without it)."""
    _need_chromium()
    from playwright.async_api import async_playwright, expect

    await web_world.ask(call_tool(RefundCardTool, {"order_id": "A-9", "amount": 120}), "done")
    path = web_world.link(ALICE, "refund-card-tool")

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        page = await browser.new_page()
        await page.goto(f"{web_world.base_url}{path}")

        await page.get_by_role("button", name="Reject").click()  # no reason: not posted
        await expect(page.get_by_role("status")).to_have_count(0)
        assert await page.get_by_label("Reason for rejecting").evaluate(
            "input => input.validity.valueMissing"
        )

        await page.get_by_label("Amount").fill("")
        await page.get_by_role("button", name="Approve with these values").click()
        await expect(page.locator("#f-amount-error")).to_have_text("Enter a value.")
        await page.get_by_label("Amount").fill("1,234.50")
        await page.get_by_role("button", name="Approve with these values").click()
        await expect(page.get_by_role("status")).to_have_text("Approved with changes by you.")
        await browser.close()

    assert web_world.ledger.runs == [
        ("refund", {"order_id": "A-9", "amount": 1234.5, "email": SECRET_EMAIL})
    ]
