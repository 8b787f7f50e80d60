"""``WebServer``: the question pages and the inbox, on aiohttp, on top of a Countersign ``App``.

```python
app = await App.create(OfficeApplication, database_url=...)
server = WebServer(app, base_url="https://approvals.example.com", notifier=mail_it)
runner = web.AppRunner(server.web_app(), access_log=None)   # the access log would hold links
```

Build it before the first question is asked: it provides the ``WebOutbox`` web channels send
through. Routes (``add_routes`` puts them on an aiohttp app of yours, beside Slack's):

- ``GET /q/{token}``: a question, with a form for each answer its asker takes, when it
  expires, how often it was reminded; ``POST /q/{token}``: its answer (``action`` = approve,
  reject, edit, respond or reply), then 303 back to the question, which now says how it closed.
  An action the page does not offer is refused (403), an unknown one is 400: it still waits.
  A body that is not a URL-encoded form in UTF-8, each field once, is 400 (``posted_fields``).
- ``GET /i/{token}``: an inbox link: signs its approver in (a cookie) and goes to ``/inbox``.
- ``GET /inbox``: what waits for the signed-in approver (the same content as Slack's /pending),
  what expires first at the top, with the time left and the reminders; escalated questions
  in the inbox of the channel's ``escalate_to`` people.
- ``GET /static/countersign.css``.

When the database fails (refused, restarting, a connection the server closed: ``bot.store.
interruptions``), a page is 503 with ``Retry-After``, "try again", never a 500: a form posted then
recorded nothing, and its question still waits.

A forged, tampered or malformed token is 404, an expired one 410: nothing is read or answered.
A link opens only as it was sent: another spelling of its token (padding, the other base64
alphabet, a percent-escape in the address) is malformed.
Every form carries a CSRF token bound to a cookie and to the page's path; a post from another
origin is refused. Every page is sent with a strict Content-Security-Policy (no script, no
inline style, forms only to this origin), no referrer to other sites, and no caching.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Final
from urllib.parse import urlsplit

from aiohttp import web

from bot.app import App
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import PauseStatus
from bot.core.errors import CountersignError
from bot.core.results import PauseView
from bot.runtime.probes import add_probe_routes
from bot.store.interruptions import is_interruption
from channels.kit.question import Ending, ending_of, question_view, title_of
from channels.kit.texts import NO_LONGER_AVAILABLE, NOT_TAKEN, SOME_VALUES, WRITE_FIRST
from channels.web.answering import Said, WebAnswering, closed_text
from channels.web.batches import WebBatches
from channels.web.catalog import WebCatalog
from channels.web.channel import INBOX_PATH, QUESTION_PATH, WebOutbox
from channels.web.delegations import DELEGATIONS_PATH, WebDelegations
from channels.web.form import Submission, form_fields, read_form
from channels.web.grants import (
    GRANT_ACTION,
    GRANT_ID_FIELD,
    GRANTS_PATH,
    WebGrants,
    grant_section,
    grants_section,
)
from channels.web.handing import REASSIGN_ACTION, reassign_from_page
from channels.web.inbox import WebInbox
from channels.web.links import Link, LinkError, LinkKind, LinkProblem, LinkSigner
from channels.web.notify import Notifier, log, log_notifier
from channels.web.offers import Action, action_of, not_offered
from channels.web.posted import UnreadableForm, posted_fields
from channels.web.render import (
    ACTION_FIELD,
    CSRF_FIELD,
    STYLESHEET,
    STYLESHEET_PATH,
    Forms,
    Notice,
    message_page,
    question_page,
)
from channels.web.render_approvals import shown_round
from channels.web.render_batches import BATCH_PATH, batch_result
from channels.web.render_inbox import inbox_page

INBOX: Final = "/inbox"
SESSION_COOKIE: Final = "countersign_session"
CSRF_COOKIE: Final = "countersign_csrf"
CSRF_PURPOSE: Final = "web-csrf/v1"
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # the link never leaves the site; Origin stays sent
    "Cache-Control": "no-store",
}
_MAX_FORM: Final = 64 * 1024
NOT_RECORDED: Final = (
    "Your answer could not be recorded: the database did not answer. Nothing was recorded and "
    "the question still waits. Please try again in a minute."
)
NOT_READ: Final = (
    "This page could not be read: the database did not answer. Please try again in a minute."
)
RETRY_AFTER_SECONDS: Final = 30
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class WebServer:
    """Serves an App's web channels: the question pages and the inbox."""

    def __init__(
        self,
        app: App,
        *,
        base_url: str,
        notifier: Notifier = log_notifier,
        link_lifetime: timedelta = timedelta(days=7),
        session_lifetime: timedelta = timedelta(hours=12),
        inbox_note: str = "",
    ) -> None:
        """``inbox_note``: HTML shown above the inbox's list (the application's own links)."""
        self._app = app
        self._inbox_note = inbox_note
        self._signer = LinkSigner(app.derived_keys, app.clock)
        self._catalog = WebCatalog(app)
        self._answering = WebAnswering(app, self._catalog)
        self._session_lifetime = session_lifetime
        self._origin = _origin(base_url)
        self._secure = base_url.startswith("https://")
        self.outbox = WebOutbox(
            signer=self._signer,
            base_url=base_url,
            notifier=notifier,
            link_lifetime=link_lifetime,
            describe_tool=self._tool_description,
            title=lambda value, *, agent, role: title_of(
                value, self._catalog, agent=agent, role=role
            ),
            separates_duties=self._catalog.role_separates_duties,
        )
        self._inbox_list = WebInbox(app, self._catalog, self.outbox)
        self._grants = WebGrants(app, self._catalog, self._answering)
        self._batches = WebBatches(app, self._catalog, self._answering, self._signer)
        self._delegations = WebDelegations(app, self._catalog, self.outbox, notifier)
        app.provide(WebOutbox, self.outbox)

    def inbox_url(self, approver: str, *, tenant_id: str) -> str:
        """A signed link that signs ``approver`` in to their inbox (print it, send it)."""
        return self.outbox.inbox_url(approver=approver, tenant_id=tenant_id)

    def web_app(self) -> web.Application:
        """The pages (``add_routes``) and the App's ``/metrics``, ``/readyz`` and ``/healthz``."""
        application = web.Application(client_max_size=_MAX_FORM)
        self.add_routes(application)
        add_probe_routes(application, self._app, is_open=lambda: True)
        return application

    def add_routes(self, application: web.Application) -> None:
        router = application.router
        router.add_get(QUESTION_PATH + "{token}", _unless_interrupted(self._question))
        router.add_post(QUESTION_PATH + "{token}", _unless_interrupted(self._answer))
        router.add_get(INBOX_PATH + "{token}", _unless_interrupted(self._sign_in))
        router.add_get(INBOX, _unless_interrupted(self._inbox))
        router.add_post(GRANTS_PATH, _unless_interrupted(self._revoke_grant))
        router.add_post(BATCH_PATH, _unless_interrupted(self._answer_batch))
        router.add_post(DELEGATIONS_PATH, _unless_interrupted(self._delegation_form))
        router.add_get(STYLESHEET_PATH, _stylesheet)

    def session(self, request: web.Request) -> Link | None:
        """Who is signed in on ``request`` (their session cookie), if anybody."""
        token = request.cookies.get(SESSION_COOKIE)
        if token is None:
            return None
        try:
            return self._signer.open(LinkKind.SESSION, token)
        except LinkError:
            return None

    def sign_in(self, response: web.StreamResponse, *, approver: str, tenant_id: str) -> None:
        """Set the session cookie of ``approver`` on ``response``."""
        token = self._signer.token(
            LinkKind.SESSION,
            approver=approver,
            tenant_id=tenant_id,
            valid_for=self._session_lifetime,
        )
        self._cookie(response, SESSION_COOKIE, token)

    def form_token(self, request: web.Request, response: web.StreamResponse, path: str) -> str:
        """The CSRF token for a form of the application's own that posts to ``path`` (its
        cookie is set on ``response``); check the post with ``check_form``."""
        cookie = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(32)
        self._cookie(response, CSRF_COOKIE, cookie)
        return self._csrf_token(cookie, path)

    def check_form(self, request: web.Request, fields: Mapping[str, str]) -> None:
        """Refuse (403) a post from another origin or without its form's CSRF token."""
        self._check_csrf(request, fields)

    async def posted_fields(self, request: web.Request) -> dict[str, str]:
        """The fields of the form posted in ``request``; a body that is not a URL-encoded form
        in UTF-8 with each field once (``channels.web.posted``) is refused with a 400 page and
        one warning in the log."""
        try:
            return await posted_fields(request)
        except UnreadableForm as error:
            log.warning("web: refused a form that cannot be read: %s", error.reason)
            raise _page_error(
                web.HTTPBadRequest,
                "Not understood",
                "This form could not be read: open the page again and send it from there.",
            ) from None

    # ---------------------------------------------------------------- routes

    async def _question(self, request: web.Request) -> web.StreamResponse:
        link = self._link(request, LinkKind.QUESTION)
        pause = await self._app.find_pause(link.pause_id, tenant_id=link.tenant_id)
        csrf = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(32)
        if pause is None:
            response = html(message_page("Not available", NO_LONGER_AVAILABLE), status=404)
        else:
            response = await self._question_response(request, link, pause, csrf=csrf, said=None)
        self.sign_in(response, approver=link.approver, tenant_id=link.tenant_id)
        self._cookie(response, CSRF_COOKIE, csrf)
        return response

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        link = self._link(request, LinkKind.QUESTION)
        fields = await self.posted_fields(request)
        csrf = self._check_csrf(request, fields)
        if fields.get(ACTION_FIELD) == GRANT_ACTION:  # approve and allow similar (grants.py)
            granted = await self._grants.answer(link, fields)
            return await self._after(request, link, granted, csrf, fields)
        said: Said
        if fields.get(ACTION_FIELD) == REASSIGN_ACTION:  # handing it on: no answer
            said = await reassign_from_page(
                self._app, self.outbox, self._answering, self._catalog, link, fields
            )
            return await self._after(request, link, said, csrf, fields)
        action = action_of(fields.get(ACTION_FIELD, ""))
        match action:
            case "edit":
                return await self._edit(request, link, fields, csrf)
            case "approve":
                said = await self._answering.answer(
                    link,
                    action,
                    decision=ToolCallApprovalDecision(approved=True),
                    shown_round=shown_round(fields),
                )
            case "reject":  # whether it needs its reason is the role's rule, the runtime's check
                reason = _text(fields, "reason") or None
                rejection = ToolCallApprovalDecision(approved=False, reason=reason)
                said = await self._answering.answer(link, action, decision=rejection)
            case "respond" | "reply":
                field, missing = _TEXT_FORMS[action]
                text = _text(fields, field)
                said = (
                    Said(status=422, text=missing)
                    if not text
                    else await self._answer_with_text(link, action, text)
                )
            case None:
                log.warning("web: refused a form with an unknown action")
                raise _page_error(
                    web.HTTPBadRequest,
                    "Not understood",
                    "This form asks for something the page does not do: open the link again.",
                )
        return await self._after(request, link, said, csrf, fields)

    async def _answer_with_text(self, link: Link, action: Action, text: str) -> Said:
        """An answer in place of the tool, or a free-text reply for the role's interpreter."""
        match action:
            case "respond":
                response = ToolCallApprovalDecision(approved=False, response=text)
                return await self._answering.answer(link, action, decision=response)
            case _:
                return await self._answering.answer(link, action, reply=text)

    async def _edit(
        self, request: web.Request, link: Link, fields: Mapping[str, str], csrf: str
    ) -> web.StreamResponse:
        pause = await self._app.find_pause(link.pause_id, tenant_id=link.tenant_id)
        if pause is None:
            return html(message_page("Not available", NO_LONGER_AVAILABLE), status=404)
        if pause.status is not PauseStatus.PENDING:
            return await self._question_response(request, link, pause, csrf=csrf, said=None)
        offers = self._catalog.offers(pause)
        if not offers.edit or pause.tool_input is None:
            said = Said(status=403, text=not_offered(offers))
            return await self._question_response(request, link, pause, csrf=csrf, said=said)
        submission = read_form(pause.tool_input, pause.proposed_arguments, fields)
        if submission.overrides is None:
            said = Said(status=422, text=SOME_VALUES)
            return await self._question_response(
                request, link, pause, csrf=csrf, said=said, submission=submission
            )
        decision = ToolCallApprovalDecision(approved=True, override_arguments=submission.overrides)
        said = await self._answering.answer(
            link, "edit", decision=decision, shown_round=shown_round(fields)
        )
        if said.field_errors or said.field_error:
            errors = {k: v for k, v in said.field_errors.items() if k in submission.typed}
            whole = [v for k, v in said.field_errors.items() if k not in submission.typed]
            if said.field_error or whole:
                errors[""] = " ".join([*whole, said.field_error]).strip()
            submission = Submission(typed=submission.typed, overrides=None, errors=errors)
        return await self._after(request, link, said, csrf, fields, submission=submission)

    async def _after(
        self,
        request: web.Request,
        link: Link,
        said: Said,
        csrf: str,
        fields: Mapping[str, str],
        *,
        submission: Submission | None = None,
    ) -> web.StreamResponse:
        if said.status == 303:
            raise web.HTTPSeeOther(location=request.path)
        pause = await self._app.find_pause(link.pause_id, tenant_id=link.tenant_id)
        if pause is None:
            return html(message_page("Not available", NO_LONGER_AVAILABLE), status=404)
        return await self._question_response(
            request,
            link,
            pause,
            csrf=csrf,
            said=said,
            submission=submission,
            reply=fields.get("reply", "") if fields.get(ACTION_FIELD) == "reply" else "",
            response=fields.get("response", "") if fields.get(ACTION_FIELD) == "respond" else "",
        )

    async def _sign_in(self, request: web.Request) -> web.StreamResponse:
        link = self._link(request, LinkKind.INBOX)
        response = web.HTTPSeeOther(location=INBOX)
        self.sign_in(response, approver=link.approver, tenant_id=link.tenant_id)
        _secure(response)
        raise response

    async def _inbox(self, request: web.Request) -> web.StreamResponse:
        session = self.session(request)
        if session is None:
            return html(
                message_page(
                    "Sign in with your link",
                    "Open the link you were sent (it signs you in), or ask for a new one.",
                ),
                status=401,
            )
        return await self._inbox_response(request, session)

    async def _inbox_response(
        self,
        request: web.Request,
        session: Link,
        *,
        notice: str = "",
        status: int = 200,
        batch: str = "",
        delegations_notice: str = "",
    ) -> web.Response:
        entries = await self._inbox_list.entries(session)
        decided = await self._inbox_list.decided(session)
        csrf = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(32)
        grants = grants_section(
            await self._grants.for_approver(session),
            csrf=self._csrf_token(csrf, GRANTS_PATH),
            csrf_field=CSRF_FIELD,
            notice=notice,
        )
        grants += await self._delegations.section(
            session,
            csrf=self._csrf_token(csrf, DELEGATIONS_PATH),
            csrf_field=CSRF_FIELD,
            notice=delegations_notice,
        )
        page = inbox_page(
            session.approver,
            entries,
            decided=decided,
            extra=batch + self._inbox_note,
            below=grants,
            batch_csrf=self._csrf_token(csrf, BATCH_PATH),
        )
        response = html(page, status=status)
        self._cookie(response, CSRF_COOKIE, csrf)
        return response

    async def _revoke_grant(self, request: web.Request) -> web.StreamResponse:
        """A Revoke form of the inbox (its CSRF checked): the inbox again, saying what it did."""
        session = self.session(request)
        if session is None:
            raise _page_error(
                web.HTTPUnauthorized, "Sign in with your link", "Open the link you were sent."
            )
        fields = await self.posted_fields(request)
        self._check_csrf(request, fields)
        status, said = await self._grants.revoke(session, fields.get(GRANT_ID_FIELD, ""))
        return await self._inbox_response(request, session, notice=said, status=status)

    async def _delegation_form(self, request: web.Request) -> web.StreamResponse:
        """The inbox's End now / Hand them on (its CSRF checked): the inbox again, saying
        what it did or what was wrong."""
        session = self.session(request)
        if session is None:
            raise _page_error(
                web.HTTPUnauthorized, "Sign in with your link", "Open the link you were sent."
            )
        fields = await self.posted_fields(request)
        self._check_csrf(request, fields)
        status, said = await self._delegations.post(session, fields)
        return await self._inbox_response(request, session, delegations_notice=said, status=status)

    async def _answer_batch(self, request: web.Request) -> web.StreamResponse:
        """The inbox's "Approve selected" / "Reject selected" (its CSRF checked): the inbox
        again, saying what became of each picked question."""
        session = self.session(request)
        if session is None:
            raise _page_error(
                web.HTTPUnauthorized, "Sign in with your link", "Open the link you were sent."
            )
        fields = await self.posted_fields(request)
        self._check_csrf(request, fields)
        said = await self._batches.answer(session, fields)
        shown = batch_result(said.lines, notice=said.notice)
        return await self._inbox_response(request, session, status=said.status, batch=shown)

    # ---------------------------------------------------------------- helpers

    def _tool_description(self, tool: str, *, agent: str, role: str) -> str:
        binding = self._app.assembly.binding_of(tool, agent=agent, role=role)
        return "" if binding is None else binding.spec.description

    async def _question_response(
        self,
        request: web.Request,
        link: Link,
        pause: PauseView,
        *,
        csrf: str,
        said: Said | None,
        submission: Submission | None = None,
        reply: str = "",
        response: str = "",
    ) -> web.Response:
        question = question_view(pause, self._catalog, now=self._app.clock.now())
        inbox = INBOX
        if pause.status is not PauseStatus.PENDING:
            text = closed_text(pause, link.approver)
            tone: str = question.words.tone if question.words is not None else "done"
            if said is not None and said.status == 409:
                text = f"{NOT_TAKEN} {text}"
                tone = "bad"
            elif said is not None and said.status == 200 and said.text:
                text = said.text  # what else was done with the answer (a grant given)
            status = said.status if said is not None else 200
            page = question_page(
                question,
                forms=None,
                notice=Notice(text=text, tone=tone),
                inbox=inbox,
                ending=await self._ending(pause),
            )
            return html(page, status=status)
        refusal = await self._answering.refusal(pause, link.approver)
        if refusal is not None:
            page = question_page(question, forms=None, notice=Notice(text=refusal, tone="bad"))
            return html(page, status=403)
        forms = Forms(
            csrf=self._csrf_token(csrf, request.path),
            fields=form_fields(pause.tool_input) if pause.tool_input is not None else (),
            real_arguments=pause.proposed_arguments,
            offers=question.offers,
            submission=submission,
            reply=reply,
            response=response,
            reason_required=pause.reject_reason == "required",
            shown=str(pause.shown_round) if pause.required_approvals > 1 else "",
        )
        notice = None if said is None else Notice(text=said.text, tone="bad")
        status = 200 if said is None else said.status
        offer = self._grants.offer(pause)
        granting = (
            ""
            if offer is None or not question.offers.approve
            else grant_section(
                offer, csrf=forms.csrf, csrf_field=CSRF_FIELD, action_field=ACTION_FIELD
            )
        )
        page = question_page(question, forms=forms, notice=notice, inbox=inbox, extra=granting)
        return html(page, status=status)

    async def _ending(self, pause: PauseView) -> Ending | None:
        """How the run went on after ``pause`` closed: its failure, or the agent's last words
        once it completed; None while it still runs (or is unknown here)."""
        try:
            result = await self._app.get_result(pause.execution_id, tenant_id=pause.tenant_id)
        except CountersignError:
            result = None
        return ending_of(result, tool_result=pause.tool_result)

    def _link(self, request: web.Request, kind: LinkKind) -> Link:
        try:
            if request.rel_url.raw_path != request.rel_url.path:
                raise LinkError(LinkProblem.MALFORMED)  # a percent-escape: another spelling
            return self._signer.open(kind, request.match_info["token"])
        except LinkError as error:
            log.warning("web: refused a %s link: %s", kind.value, error.problem.value)
            if error.problem is LinkProblem.EXPIRED:
                raise _page_error(
                    web.HTTPGone, "Link expired", "This link has expired: ask for a new one."
                ) from None
            raise _page_error(
                web.HTTPNotFound,
                "Not found",
                "This link is not valid: check that it was copied whole.",
            ) from None

    def _check_csrf(self, request: web.Request, fields: Mapping[str, str]) -> str:
        origin = request.headers.get("Origin")
        if origin is not None and origin != self._origin:
            log.warning("web: refused a form posted from another origin")
            raise _page_error(web.HTTPForbidden, "Refused", "This form came from another site.")
        cookie = request.cookies.get(CSRF_COOKIE, "")
        given = fields.get(CSRF_FIELD, "")
        if not cookie or not hmac.compare_digest(given, self._csrf_token(cookie, request.path)):
            log.warning("web: refused a form without a valid CSRF token")
            raise _page_error(
                web.HTTPForbidden,
                "Refused",
                "This form is out of date or did not come from this page: open the link again.",
            )
        return cookie

    def _csrf_token(self, cookie: str, path: str) -> str:
        _, key = self._app.derived_keys.current(CSRF_PURPOSE)
        return hmac.new(key, f"{cookie}|{path}".encode(), hashlib.sha256).hexdigest()

    def _cookie(self, response: web.StreamResponse, name: str, value: str) -> None:
        response.set_cookie(
            name, value, httponly=True, samesite="Strict", secure=self._secure, path="/"
        )


_TEXT_FORMS: Final = {
    "respond": ("response", WRITE_FIRST),
    "reply": ("reply", WRITE_FIRST),
}
"""The forms that answer with a text: the field it is in, and what to say when it is empty."""


def _text(fields: Mapping[str, str], name: str) -> str:
    return fields.get(name, "").strip()[:3000]


def html(body: str, *, status: int = 200) -> web.Response:
    """An HTML page with the security headers."""
    return web.Response(
        text=body,
        status=status,
        content_type="text/html",
        charset="utf-8",
        headers=SECURITY_HEADERS,
    )


def _secure(response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value


def _unless_interrupted(handler: Handler) -> Handler:
    """``handler``, answering 503 "try again" (with ``Retry-After``) when the database fails
    under it, instead of a 500: a post recorded nothing (``App.answer`` records in one
    transaction), so its question still waits and the same form may be sent again."""

    async def guarded(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException:
            raise
        except Exception as error:
            if not is_interruption(error):
                raise
            log.warning(
                "web: %s %s answered 503, the database failed: %s",
                request.method,
                request.path.split("/")[1] if request.path.count("/") > 1 else request.path,
                type(error).__name__,
            )
            posted = request.method == "POST"
            page = _page_error(
                web.HTTPServiceUnavailable,
                "Not recorded" if posted else "Try again",
                NOT_RECORDED if posted else NOT_READ,
            )
            page.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
            raise page from None

    return guarded


def _page_error(kind: type[web.HTTPException], title: str, text: str) -> web.HTTPException:
    error = kind(text=message_page(title, text), content_type="text/html", headers=SECURITY_HEADERS)
    return error


async def _stylesheet(_: web.Request) -> web.Response:
    return web.Response(
        text=STYLESHEET,
        content_type="text/css",
        headers={"Cache-Control": "max-age=3600", "X-Content-Type-Options": "nosniff"},
    )


def _origin(base_url: str) -> str:
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}"
