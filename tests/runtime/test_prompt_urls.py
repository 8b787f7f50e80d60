"""A reply interpreter's prompt URLs: file:, data: and http(s): (a loopback server), read once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot.runtime.prompt_urls import PromptSource, PromptUrlError


class PromptServer:
    def __init__(self) -> None:
        self.hits = 0
        self.base_url = ""
        self.release = asyncio.Event()

    async def prompt(self, request: web.Request) -> web.Response:
        self.hits += 1
        return web.Response(text="Be brief.", charset="utf-8")

    async def slow(self, request: web.Request) -> web.Response:
        await self.release.wait()
        return web.Response(text="too late")


@pytest_asyncio.fixture
async def server() -> AsyncIterator[PromptServer]:
    prompts = PromptServer()
    app = web.Application()
    app.router.add_get("/prompt.md", prompts.prompt)
    app.router.add_get("/slow.md", prompts.slow)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    prompts.base_url = str(test_server.make_url(""))
    try:
        yield prompts
    finally:
        prompts.release.set()
        await test_server.close()


async def test_an_http_prompt_is_fetched_once(server: PromptServer) -> None:
    source = PromptSource()
    url = f"{server.base_url}/prompt.md"

    texts = await asyncio.gather(source.text(url), source.text(url), source.text(url))

    assert list(texts) == ["Be brief."] * 3
    assert server.hits == 1


async def test_http_errors_and_timeouts_are_not_kept(server: PromptServer) -> None:
    # the 404 under a generous timeout: a loaded machine must not time it out first
    with pytest.raises(PromptUrlError, match="404"):
        await PromptSource(timeout=timedelta(seconds=30)).text(f"{server.base_url}/missing.md")
    source = PromptSource(timeout=timedelta(seconds=0.2))
    with pytest.raises(PromptUrlError, match="timed out"):
        await source.text(f"{server.base_url}/slow.md")
    server.release.set()
    assert await source.text(f"{server.base_url}/slow.md") == "too late"  # tried again


async def test_file_and_data_urls(tmp_path: Path) -> None:
    rules = tmp_path / "rules with space.md"
    rules.write_text("Rule one.", encoding="utf-8")
    source = PromptSource()

    assert await source.text(rules.as_uri()) == "Rule one."
    assert await source.text("data:,Say%20yes%20or%20no.") == "Say yes or no."
    assert await source.instructions("Prompt.", (rules.as_uri(),)) == "Prompt.\n\nRule one."
    with pytest.raises(PromptUrlError, match="not a file:, data: or http"):
        await source.text("ftp://example.com/prompt.md")
    with pytest.raises(PromptUrlError):
        await source.text("data:no-comma")
