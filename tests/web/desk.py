"""The web office desk (``bot.desk.web``) served in process on loopback, as ``python -m bot``
serves it without Slack: its own form (``POST /``) beside the web channel's pages, on the
offline demo model. ``asked(...)`` has the desk ask its refund and expense questions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import ClientSession
from aiohttp.test_utils import TestServer

from bot import App, PendingPause
from bot.desk.office import REFUND_TOOL
from bot.desk.web import DESK_PERSON, DESK_TENANT, START_PATH, WebDesk, build_web_desk
from bot.settings import Settings
from bot.testing import FakeClock
from channels.web import WebNotice, WebServer
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.ports import free_port
from tests.web.conftest import browser
from tests.web.pages import csrf_of, open_page


@dataclass
class Desk:
    app: App
    server: WebServer
    http: ClientSession
    """A browser signed in as the desk's person."""
    base_url: str
    notices: list[WebNotice]

    def path_of(self, url: str) -> str:
        return urlsplit(url).path

    async def ask(self, text: str = "refund A-1001 and book the lunch") -> list[PendingPause]:
        """Ask the desk on its own form, as the person does; what then waits (pause ids in)."""
        _, page = await open_page(self.http, START_PATH)
        response = await self.http.post(
            START_PATH, data={"csrf": csrf_of(page), "text": text}, allow_redirects=False
        )
        assert response.status == 303, await response.text()
        return await self.pending()

    async def pending(self) -> list[PendingPause]:
        return await self.app.list_pending(tenant_id=DESK_TENANT, include_channel_pause_ids=True)

    async def ask_refund(self) -> PendingPause:
        """Ask the desk; its refund question (the expense waits beside it)."""
        [refund] = [p for p in await self.ask() if p.ask.tool == REFUND_TOOL]
        return refund

    def question_path(self, pending: PendingPause) -> str:
        assert pending.pause_id is not None
        url = self.server.outbox.question_url(
            pending.pause_id, approver=DESK_PERSON, tenant_id=DESK_TENANT
        )
        return self.path_of(url)


@asynccontextmanager
async def served_desk(tmp_path: Path) -> AsyncIterator[Desk]:
    app = await App.create(
        build_web_desk(),
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'desk.db'}",
        clock=FakeClock(),
        settings=Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS),
    )
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    notices: list[WebNotice] = []

    async def notify(notice: WebNotice) -> None:
        notices.append(notice)

    server = WebServer(app, base_url=base_url, notifier=notify)
    workflow = app.assembly.application.entry_workflow
    assert workflow is not None
    served = TestServer(WebDesk(app, server, workflow).web_app(), host="127.0.0.1", port=port)
    await served.start_server()
    http = browser(base_url)
    try:
        inbox = server.inbox_url(DESK_PERSON, tenant_id=DESK_TENANT)
        signed_in = await http.get(urlsplit(inbox).path)
        assert signed_in.status == 200
        yield Desk(app=app, server=server, http=http, base_url=base_url, notices=notices)
    finally:
        await http.close()
        await served.close()
        await app.close()
