"""``COUNTERSIGN_GRAPH=my_agent:graph python -m bot``: the graph served on the web desk, as a
process, asked and approved in Chromium (Debian's, driven by Playwright).

The screenshot of the desk serving the graph (its answer on the Ask page) is kept in
``tests/artifacts/served-graph-web-desk.png``, its question's page in
``tests/artifacts/served-graph-question.png`` (git-ignored).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from tests.cli.processes import person_env
from tests.cli.web_desk import start_python_m_bot
from tests.ports import free_port
from tests.served.modules import ANSWER, MY_AGENT, REASON, REQUEST, runs, write
from tests.web.test_browser import CHROMIUM, CHROMIUM_ARGS, _need_chromium

ARTIFACTS: Final = Path(__file__).resolve().parents[1] / "artifacts"
SCREENSHOT: Final = ARTIFACTS / "served-graph-web-desk.png"
QUESTION_SHOT: Final = ARTIFACTS / "served-graph-question.png"


async def test_the_web_desk_serves_your_graph_in_the_browser(tmp_path: Path) -> None:
    _need_chromium()
    from playwright.async_api import async_playwright, expect

    write(tmp_path, "my_agent", MY_AGENT)
    env = person_env(PORT=str(free_port()), COUNTERSIGN_GRAPH="my_agent:graph")
    served = start_python_m_bot(tmp_path, env)
    try:
        assert any("Countersign serves your graph my-agent on" in line for line in served.printed)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
            )
            page = await browser.new_page()
            await page.goto(served.inbox_link)  # signs in
            await page.goto(f"{served.origin}/")
            await expect(page.locator("h1")).to_have_text("Ask my-agent")
            await page.get_by_label("What should it do?").fill(REQUEST)
            await page.get_by_role("button", name="Ask").click()
            await expect(page.locator("ul.inbox li")).to_have_count(1)  # the inbox
            await page.locator("ul.inbox li").get_by_role("link").click()
            await expect(page.get_by_text("A-7", exact=True)).to_be_visible()
            assert REASON in await page.content()  # why the agent asks, with the question
            assert REQUEST in await page.content()
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(QUESTION_SHOT), full_page=True)
            assert runs(tmp_path) == []
            await page.get_by_role("button", name="Approve", exact=True).click()
            await expect(page.get_by_role("status")).to_have_text("Approved by you.")
            await page.goto(f"{served.origin}/")
            await expect(page.get_by_text(ANSWER)).to_be_visible()
            await page.screenshot(path=str(SCREENSHOT), full_page=True)
            await browser.close()
    finally:
        code, _, err = served.stop()
    assert code == 0, err
    assert runs(tmp_path) == ["A-7 30.00"]
