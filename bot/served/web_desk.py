"""The web desk serving your graphs: ask them on its page, answer their questions in the inbox.

``python -m bot`` with ``COUNTERSIGN_GRAPH`` and no Slack settings serves it on 127.0.0.1. Each
request starts a thread of its own on the graph (the one chosen, with several), with the
words as its input; the page lists the requests asked from it and the graph's last message
once one ends (kept in this process: the desk is for trying things on one machine).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Final

from aiohttp import web

from bot.app import App
from bot.core.enums import ExecutionStatus
from bot.core.errors import CountersignError
from bot.core.results import ExecutionResult
from bot.langgraph import LangGraphAgent
from bot.runtime.graph_output import answer_of
from channels.web import WebServer
from channels.web.render import page
from channels.web.server import INBOX, html

START_PATH: Final = "/"
INBOX_NOTE: Final = f'<p><a href="{START_PATH}">Ask your agent for something</a></p>'
KEPT: Final = 20
"""How many requests the page lists."""
STATUS: Final = {
    ExecutionStatus.RUNNING: "running",
    ExecutionStatus.PAUSED: "waiting for your approval",
    ExecutionStatus.COMPLETED: "done",
    ExecutionStatus.FAILED: "failed",
    ExecutionStatus.CANCELLED: "stopped",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Asked:
    text: str
    agent: str
    execution_id: str
    tenant_id: str


class GraphDesk:
    """The page that asks the graphs, beside the web channel's pages."""

    def __init__(self, app: App, server: WebServer, agents: Sequence[LangGraphAgent]) -> None:
        self._app = app
        self._server = server
        self._agents = tuple(agents)
        self._asked: list[Asked] = []

    def web_app(self) -> web.Application:
        application = self._server.web_app()
        self.add_routes(application)
        return application

    def add_routes(self, application: web.Application) -> None:
        """The page asking the graphs (``/``) on ``application``."""
        application.router.add_get(START_PATH, self._home)
        application.router.add_post(START_PATH, self._start)

    async def _home(self, request: web.Request) -> web.StreamResponse:
        session = self._server.session(request)
        if session is None:
            text = "Open the inbox link printed in the terminal: it signs you in."
            return html(
                page("Sign in", f"<section><h1>Sign in</h1><p>{escape(text)}</p></section>"),
                status=401,
            )
        response = html("")
        csrf = self._server.form_token(request, response, START_PATH)
        names = ", ".join(a.name for a in self._agents)
        choose = ""
        if len(self._agents) > 1:
            options = "".join(
                f'<option value="{escape(a.name)}">{escape(a.name)}</option>' for a in self._agents
            )
            choose = (
                '<label for="agent">Which agent</label>'
                f'<select id="agent" name="agent">{options}</select>'
            )
        response.text = page(
            "Ask your agent",
            f"<section><h1>Ask {escape(names)}</h1>"
            f'<form method="post"><input type="hidden" name="csrf" value="{escape(csrf)}">'
            f"{choose}"
            '<label for="text">What should it do?</label>'
            '<input type="text" id="text" name="text" maxlength="2000" required>'
            '<button class="primary">Ask</button></form>'
            '<p class="meta">What it asks to approve waits in '
            f'<a href="{INBOX}">your inbox</a>.</p></section>'
            f"{await self._requests(session.approver)}",
            home=INBOX,
        )
        return response

    async def _requests(self, person: str) -> str:
        """The requests asked from this page, newest first, with where each stands."""
        rows = []
        for asked in self._asked:
            try:
                result = await self._app.get_result(asked.execution_id, tenant_id=asked.tenant_id)
            except CountersignError:
                continue
            rows.append(_request_row(asked, result))
        if not rows:
            return ""
        return f'<section><h2>Your requests</h2><ul class="inbox">{"".join(rows)}</ul></section>'

    async def _start(self, request: web.Request) -> web.StreamResponse:
        session = self._server.session(request)
        if session is None:
            raise web.HTTPUnauthorized(text="open the inbox link first")
        fields = await self._server.posted_fields(request)
        self._server.check_form(request, fields)
        text = fields.get("text", "").strip()[:2000]
        chosen = fields.get("agent", "")
        agent = next((a for a in self._agents if a.name == chosen), self._agents[0])
        if not text:
            raise web.HTTPSeeOther(location=START_PATH)
        result = await agent.ainvoke(
            {"messages": [{"role": "user", "content": text}]},
            thread_id=f"web:{uuid.uuid4().hex}",
            tenant_id=session.tenant_id,
            owner_id=session.approver,
        )
        asked = Asked(
            text=text,
            agent=agent.name,
            execution_id=result.execution_id,
            tenant_id=session.tenant_id,
        )
        self._asked = [asked, *self._asked][:KEPT]
        paused = result.status is ExecutionStatus.PAUSED
        raise web.HTTPSeeOther(location=INBOX if paused else START_PATH)


def _request_row(asked: Asked, result: ExecutionResult) -> str:
    said = ""
    if result.status is ExecutionStatus.COMPLETED:
        said = f"<br>{escape(answer_of(result.output) or 'Done.')}"
    return (
        f"<li>{escape(asked.text)} "
        f'<span class="meta">({escape(asked.agent)}: {STATUS[result.status]})</span>{said}</li>'
    )
