"""The web office desk: ``python -m bot`` without Slack settings serves it on 127.0.0.1.

Try Countersign with nothing to set up: a page asks the desk for something, the desk's agent
asks to refund a card and to book an expense, and both questions wait in the person's inbox
(``channels.web``) to be approved, rejected, edited or answered in words. One person (``you``)
asks and answers: the refund role is answered by its approvers (``you``), the expense by whoever
asked. The model is the offline demo model unless ``COUNTERSIGN_DESK_MODEL`` names another.
"""

from __future__ import annotations

from html import escape
from typing import Final

from aiohttp import web

from bot.app import App
from bot.components.decorators import reply_interpreter
from bot.core.dtos import WorkflowStartText
from bot.core.enums import DecidedBy, PauseAnswerer
from bot.desk.office import desk_application, desk_roles
from bot.desk.offline_model import OfflineDemoModel
from bot.desk.settings import OFFLINE_MODEL
from channels.web import WebServer, web_channel
from channels.web.render import page
from channels.web.server import INBOX, html
from interpreters import KeywordReplyInterpreter

DESK_PERSON: Final = "you"
"""Who asks and who answers on the web desk (one person trying it)."""
DESK_TENANT: Final = "web-desk"
START_PATH: Final = "/"
INBOX_NOTE: Final = f'<p><a href="{START_PATH}">Ask the desk for something</a></p>'
EXAMPLE_REQUEST: Final = (
    "Refund order A-1001 (120.00, it arrived broken) and book Friday's team lunch (86.50)."
)


@reply_interpreter(
    name="web-desk-refund-reply-interpreter",
    description="Reads approve / reject[: reason] in an answer to a refund",
    decided_by=DecidedBy.CODE,
)
class WebDeskRefundReplyInterpreter(KeywordReplyInterpreter): ...


@reply_interpreter(
    name="web-desk-expense-reply-interpreter",
    description="Reads approve / reject[: reason] in an answer to an expense",
    decided_by=DecidedBy.CODE,
)
class WebDeskExpenseReplyInterpreter(KeywordReplyInterpreter): ...


def build_web_desk(model: str = OFFLINE_MODEL) -> type:
    """The web desk application (its classes are made per call)."""
    refund_role, expense_role = desk_roles(
        refund_answered_by=PauseAnswerer.CHANNEL,
        refund_description="A manager approves card refunds",
        interpreters=(WebDeskRefundReplyInterpreter, WebDeskExpenseReplyInterpreter),
        prefix="WebDesk",
    )
    refunds = web_channel(
        refund_role, name="web-desk-refund-approval-channel", approvers=[DESK_PERSON]
    )
    expenses = web_channel(expense_role, name="web-desk-expense-approval-channel")
    return desk_application(
        name="web-office-desk",
        description="An office desk agent whose refunds and expenses are approved on the web",
        roles=(refund_role, expense_role),
        channels=[refunds, expenses],
        model=OfflineDemoModel() if model == OFFLINE_MODEL else model,
    )


class WebDesk:
    """The desk's own page (ask it for something) beside the web channel's pages."""

    def __init__(self, app: App, server: WebServer, workflow: type) -> None:
        self._app = app
        self._server = server
        self._workflow = workflow

    def web_app(self) -> web.Application:
        application = self._server.web_app()
        application.router.add_get(START_PATH, self._home)
        application.router.add_post(START_PATH, self._start)
        return application

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
        response.text = page(
            "Ask the desk",
            "<section><h1>Ask the office desk</h1>"
            f'<form method="post"><input type="hidden" name="csrf" value="{escape(csrf)}">'
            '<label for="text">What should the desk do?</label>'
            f'<input type="text" id="text" name="text" maxlength="2000" required '
            f'value="{escape(EXAMPLE_REQUEST)}"><button class="primary">Ask</button></form>'
            '<p class="meta">Its agent asks before each refund and each expense: the questions '
            f'wait in <a href="{INBOX}">your inbox</a>.</p></section>',
            home=INBOX,
        )
        return response

    async def _start(self, request: web.Request) -> web.StreamResponse:
        session = self._server.session(request)
        if session is None:
            raise web.HTTPUnauthorized(text="open the inbox link first")
        fields = await self._server.posted_fields(request)
        self._server.check_form(request, fields)
        text = fields.get("text", "").strip()[:2000] or EXAMPLE_REQUEST
        await self._app.execute(
            self._workflow,
            WorkflowStartText(text=text),
            tenant_id=session.tenant_id,
            owner_id=session.approver,
        )
        raise web.HTTPSeeOther(location=INBOX)
