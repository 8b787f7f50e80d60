"""The web channel worked as a browser works it: each person with their own cookies opens the
link they were sent (or, for someone who was sent none, a link signed for them), posts the
page's own forms with its CSRF token; every page read is parsed as HTML."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

from aiohttp import ClientSession
from aiohttp.test_utils import TestServer

from bot import App, ExecutionResult, Settings, WorkflowStartText
from bot.testing import FakeClock, mock_llm
from channels.web import WebNotice, WebServer
from tests.conformance.behind import (
    EXPENSE,
    GRAPH_TOOL,
    LARGE_REFUND_ARGUMENTS,
    REFUND_ARGUMENTS,
    REQUEST,
    Behind,
    NativeQuestion,
)
from tests.conformance.driver import (
    Answer,
    Asked,
    Capability,
    Kind,
    People,
    Scenario,
    Shown,
    Told,
    Waiting,
)
from tests.office import Ledger
from tests.ports import free_port
from tests.web.conftest import browser
from tests.web.office import (
    ALICE,
    BOB,
    CAROL,
    OWNER,
    STRANGER,
    TENANT,
    BookExpenseTool,
    PayOutTool,
    RefundApprovalChannel,
    RefundCardTool,
    WebOfficeAgent,
    WebOfficeApplication,
    WebOfficeWorkflow,
    WireMoneyTool,
)

HOUR = timedelta(hours=1)
VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
ACTIONS = {
    "approve": Kind.APPROVE,
    "edit": Kind.EDIT,
    "reject": Kind.REJECT,
    "respond": Kind.RESPOND,
}
QUESTIONS: dict[Scenario, NativeQuestion] = {
    Scenario.REFUND: NativeQuestion(
        tool=RefundCardTool,
        arguments=REFUND_ARGUMENTS,
        ran_as="refund",
        owner=OWNER,
        approver=ALICE,
    ),
    Scenario.OWNERS: NativeQuestion(
        tool=BookExpenseTool, arguments=EXPENSE, ran_as="expense", owner=OWNER, approver=OWNER
    ),
    Scenario.OWN_REQUEST: NativeQuestion(  # Alice asks; Olga, its other approver, may approve
        tool=WireMoneyTool,
        arguments={"iban": "DE02", "amount": 9},
        ran_as="wire",
        owner=ALICE,
        approver=ALICE,
    ),
    Scenario.TIMED: NativeQuestion(
        tool=PayOutTool,
        arguments={"payee": "Dana", "amount": 9},
        ran_as="payout",
        owner=OWNER,
        approver=BOB,
    ),
}
QUESTIONS[Scenario.LARGE_REFUND] = dataclasses.replace(
    QUESTIONS[Scenario.REFUND], arguments=LARGE_REFUND_ARGUMENTS
)
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


class Page(HTMLParser):
    """A page read as HTML: its words, its title, its argument rows, the answers its forms
    post; tags must nest and close."""

    def __init__(self, body: str) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self.title = ""
        self.fields: dict[str, str] = {}
        self.actions: list[str] = []
        self.listed: list[str] = []
        """The links of the inbox's list of what waits (not of what was decided)."""
        self.values: list[str] = []
        """What the page's inputs hold (a leaked value hides there, not in the words)."""
        self._open: list[str] = []
        self._class_of: list[str] = []
        self._term: str | None = None
        self.feed(body)
        self.close()
        assert self._open == [], f"unclosed tags: {self._open}"

    @property
    def _in_waiting_list(self) -> bool:
        """Inside the inbox's list of what waits (not its "decided" list)."""
        return "inbox" in self._classes and "decided" not in self._classes

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = dict(attrs)
        if tag not in VOID:
            self._open.append(tag)
            self._class_of.append(str(given.get("class") or ""))
        if tag == "a" and given.get("href") and self._in_waiting_list:
            self.listed.append(str(given["href"]))
        if tag == "input" and given.get("name") == "action" and given.get("value"):
            self.actions.append(str(given["value"]))
        elif tag in ("input", "textarea", "option") and given.get("name") != "csrf":
            self.values.extend(str(v) for k, v in attrs if k in ("value", "placeholder") and v)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self._open and self._open[-1] == tag, f"</{tag}> closes {self._open[-1:]}"
        self._open.pop()
        self._class_of.pop()

    def handle_data(self, data: str) -> None:
        if "script" in self._open or "style" in self._open or not data.strip():
            return
        self.words.append(data.strip())
        where = self._open[-1] if self._open else ""
        if where == "h1" and not self.title:
            self.title = data.strip()
        elif where == "dt":
            self._term = data.strip()
        elif where == "dd" and self._term is not None:
            self.fields[self._term] = data.strip()
            self._term = None

    @property
    def _classes(self) -> set[str]:
        return {name for classes in self._class_of for name in classes.split()}

    @property
    def text(self) -> str:
        return "\n".join(self.words)

    @property
    def offered(self) -> frozenset[Kind]:
        return frozenset(ACTIONS[a] for a in self.actions if a in ACTIONS)


@dataclass
class WebDriver:
    name: ClassVar[str] = "web"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(Capability)
    missing: ClassVar[Mapping[Capability, str]] = {}
    people: ClassVar[People] = People(
        requester=OWNER, stranger=STRANGER, second_approver=OWNER, escalated_to=CAROL
    )

    app: App
    server: WebServer
    base_url: str
    behind: Behind
    clock: FakeClock
    notices: list[WebNotice]
    browsers: dict[str, ClientSession] = field(default_factory=dict)
    pages: list[str] = field(default_factory=list)
    """The words and input values of every page read."""
    _csrf: dict[tuple[str, str], str] = field(default_factory=dict)

    # ---------------------------------------------------------------- asking

    async def ask(
        self,
        scenario: Scenario,
        *,
        allowed: Sequence[Kind] = (Kind.APPROVE, Kind.EDIT, Kind.REJECT),
        final: str = "all done",
    ) -> Asked:
        if scenario in (Scenario.GRAPH, Scenario.GRAPH_WITH_SECRET):
            secret = scenario is Scenario.GRAPH_WITH_SECRET
            result = await self.behind.attach_graph(
                RefundApprovalChannel, allowed, owner=OWNER, secret=secret
            )
            tool, approver = GRAPH_TOOL, ALICE
        else:
            question = QUESTIONS[scenario]

            async def run(owner: str) -> ExecutionResult:
                start = WorkflowStartText(text=REQUEST)
                return await self.app.execute(
                    WebOfficeWorkflow, start, tenant_id=TENANT, owner_id=owner
                )

            result = await self.behind.ask_native(question, run, final=final)
            tool, approver = question.tool_name, question.approver
        pending = await self.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
        [pause_id] = [p.pause_id for p in pending if p.ask.tool == tool]
        assert pause_id is not None
        if scenario is Scenario.TIMED:
            await self.clock.advance(timedelta(seconds=5))  # just after a sweep's tick
        return self.behind.keep(scenario, result, pause_id=pause_id, tool=tool, approver=approver)

    def link(self, asked: Asked, person: str) -> str:
        """The newest link ``person`` was sent about the question; for someone sent none, a
        link signed for them (as the server makes them)."""
        sent = [n.url for n in self.notices if n.approver == person and n.tool == asked.tool]
        url = (
            sent[-1]
            if sent
            else self.server.outbox.question_url(asked.pause_id, approver=person, tenant_id=TENANT)
        )
        return url.removeprefix(self.base_url)

    def browser_of(self, person: str) -> ClientSession:
        if person not in self.browsers:
            self.browsers[person] = browser(self.base_url)
        return self.browsers[person]

    async def open(self, asked: Asked, person: str) -> tuple[int, Page, str]:
        path = self.link(asked, person)
        response = await self.browser_of(person).get(path)
        body = await response.text()
        page = self.read(body)
        found = _CSRF.search(body)
        if found is not None:
            self._csrf[(person, path)] = found.group(1)
        return response.status, page, path

    def read(self, body: str) -> Page:
        page = Page(body)
        self.pages.append("\n".join([page.text, *page.values]))
        return page

    # ---------------------------------------------------------------- reading

    async def shown(self, asked: Asked, *, to: str | None = None) -> Shown:
        status, page, _ = await self.open(asked, to or asked.approver)
        assert status == 200, page.text
        return Shown(title=page.title, text=page.text, fields=page.fields, offered=page.offered)

    # ---------------------------------------------------------------- answering

    async def answer(self, asked: Asked, answer: Answer, *, by: str) -> Told:
        form = {"action": answer.kind.value}
        match answer.kind:
            case Kind.REJECT:
                form["reason"] = answer.reason or ""
            case Kind.RESPOND:
                form["response"] = answer.response or ""
            case Kind.EDIT:
                form |= {f"arg.{k}": v for k, v in (answer.arguments or {}).items()}
            case Kind.APPROVE:
                pass
        return await self.post(asked, form, by=by)

    async def reply(self, asked: Asked, words: str, *, by: str) -> Told:
        return await self.post(asked, {"action": "reply", "reply": words}, by=by)

    async def post(self, asked: Asked, form: dict[str, str], *, by: str) -> Told:
        """Open the question as ``by`` and post ``form`` with the CSRF token of the page (or
        of the last page with a form this browser saw there, as a tab left open would)."""
        _, page, path = await self.open(asked, by)
        csrf = self._csrf.get((by, path))
        if csrf is None:  # never shown a form: nothing to post
            return Told(taken=False, text=page.text)
        form = {"csrf": csrf, **form}
        response = await self.browser_of(by).post(path, data=form, allow_redirects=False)
        if response.status == 303:
            shown = await self.browser_of(by).get(response.headers["Location"])
            return Told(taken=True, text=self.read(await shown.text()).text)
        return Told(taken=False, text=self.read(await response.text()).text)

    async def waiting_for(self, person: str) -> Waiting:
        """The inbox, signed in by the link the server makes for ``person``."""
        http = self.browser_of(person)
        url = self.server.inbox_url(person, tenant_id=TENANT).removeprefix(self.base_url)
        signed_in = await http.get(url, allow_redirects=False)
        assert signed_in.status == 303, await signed_in.text()
        response = await http.get("/inbox")
        assert response.status == 200
        page = self.read(await response.text())
        return Waiting(count=len(page.listed), text=page.text)

    async def withdraw(self, asked: Asked) -> None:
        await self.behind.withdraw(asked)

    async def cancel(self, asked: Asked) -> None:
        await self.app.cancel(asked.thread_id, tenant_id=TENANT)

    async def advance(self, asked: Asked, hours: int) -> list[str]:
        seen = len(self.notices)
        for _ in range(hours):
            await self.clock.advance(HOUR)
        return [f"{n.subject}\n{n.text}" for n in self.notices[seen:]]

    # ---------------------------------------------------------------- behind

    def runs(self) -> list[dict[str, object]]:
        return self.behind.runs()

    def agent_read(self) -> list[str]:
        return self.behind.agent_read()

    async def audit(self, asked: Asked) -> str:
        return await self.behind.audit(asked)

    def everything_said(self) -> str:
        told = [f"{n.subject}\n{n.text}" for n in self.notices]
        return "\n".join([*told, *self.pages])


@asynccontextmanager
async def web_driver(tmp_path: Path) -> AsyncIterator[WebDriver]:
    llm = mock_llm(WebOfficeAgent)
    ledger = Ledger()
    clock = FakeClock()
    app = await App.create(
        WebOfficeApplication,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        clock=clock,
        settings=Settings(),
        services={Ledger: ledger},
    )
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    notices: list[WebNotice] = []

    async def notify(notice: WebNotice) -> None:
        notices.append(notice)

    server = WebServer(app, base_url=base_url, notifier=notify)
    served = TestServer(server.web_app(), host="127.0.0.1", port=port)
    await served.start_server()
    driver = WebDriver(
        app=app,
        server=server,
        base_url=base_url,
        behind=Behind(app=app, ledger=ledger, llm=llm, tenant=TENANT),
        clock=clock,
        notices=notices,
    )
    try:
        yield driver
    finally:
        for opened in driver.browsers.values():
            await opened.close()
        await served.close()
        await app.close()
