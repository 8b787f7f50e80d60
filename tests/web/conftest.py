"""The web office served on loopback: an App, its ``WebServer`` and an HTTP client with cookies."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from aiohttp import ClientSession, CookieJar
from aiohttp.test_utils import TestServer

from bot import App, ExecutionResult, WorkflowStartText
from bot.settings import Settings
from bot.testing import FakeClock, ScriptedChatModel, mock_llm
from channels.web import WebNotice, WebServer
from tests.office import Ledger
from tests.ports import free_port
from tests.web.office import TENANT, WebOfficeAgent, WebOfficeApplication, WebOfficeWorkflow


@dataclass
class WebWorld:
    app: App
    server: WebServer
    http: ClientSession
    ledger: Ledger
    clock: FakeClock
    llm: ScriptedChatModel
    base_url: str
    notices: list[WebNotice] = field(default_factory=list)
    unreachable: set[str] = field(default_factory=set)
    """People the notifier fails for (it raises): the rest are still told."""
    workflow: type = WebOfficeWorkflow

    async def ask(self, *scripted: Any, owner: str = "olga") -> ExecutionResult:
        """Run the workflow with the agent scripted to answer ``scripted`` in turn."""
        self.llm.then_return(*scripted)
        return await self.app.execute(
            self.workflow,
            WorkflowStartText(text="please"),
            tenant_id=TENANT,
            owner_id=owner,
        )

    def link(self, approver: str, tool: str, *, index: int = -1) -> str:
        """The path of the question link the notifier got for ``approver`` about ``tool``."""
        urls = [n.url for n in self.notices if n.approver == approver and n.tool == tool]
        return urlsplit(urls[index]).path

    def client(self) -> ClientSession:
        """Another browser: its own cookies."""
        return browser(self.base_url)


def browser(base_url: str) -> ClientSession:
    """An HTTP client that keeps cookies like a browser (also for 127.0.0.1)."""
    return ClientSession(base_url=base_url, cookie_jar=CookieJar(unsafe=True))


@pytest.fixture
async def web_world(tmp_path: Path) -> AsyncIterator[WebWorld]:
    async with open_web_world(tmp_path) as world:
        yield world


@asynccontextmanager
async def open_web_world(
    tmp_path: Path, application: tuple[type, type, type] | None = None
) -> AsyncIterator[WebWorld]:
    """The web world of ``application`` (the application, its agent, its workflow; by default
    the web office)."""
    application_cls, agent, workflow = application or (
        WebOfficeApplication,
        WebOfficeAgent,
        WebOfficeWorkflow,
    )
    llm = mock_llm(agent)
    ledger = Ledger()
    clock = FakeClock()
    app = await App.create(
        application_cls,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        clock=clock,
        settings=Settings(),
        services={Ledger: ledger},
    )
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    notices: list[WebNotice] = []
    unreachable: set[str] = set()

    async def notify(notice: WebNotice) -> None:
        if notice.approver in unreachable:
            raise ConnectionError(f"cannot reach {notice.approver}")
        notices.append(notice)

    server = WebServer(app, base_url=base_url, notifier=notify)
    served = TestServer(server.web_app(), host="127.0.0.1", port=port)
    await served.start_server()
    http = browser(base_url)
    try:
        yield WebWorld(
            app=app,
            server=server,
            http=http,
            ledger=ledger,
            clock=clock,
            llm=llm,
            base_url=base_url,
            notices=notices,
            unreachable=unreachable,
            workflow=workflow,
        )
    finally:
        await http.close()
        await served.close()
        await app.close()
