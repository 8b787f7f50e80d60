"""Each request Slack sends the bot, observed: a span (``countersign.slack.request``: its kind,
action, outcome and HTTP status) and a count by kind and outcome, with the time to Bolt's answer
(``countersign_slack_requests``, ``countersign_slack_request_duration_seconds``).

A request the HTTP edge refuses before Bolt sees it (``channels.slack.web``) is counted too, by
why, as its kind: ``bad_signature`` (401: a wrong ``SLACK_SIGNING_SECRET`` shows here),
``too_large`` (413), ``unreadable`` (400), outcome ``refused`` (:func:`edge_counter`).

Wraps Bolt's dispatch (HTTP and Socket Mode alike) and only reads the body: the work a listener
starts after its ack runs in a task made inside the dispatch, so its spans (answer, continue)
are children of the request's. Never a tenant, user or pause id: the kind (``block_actions``,
``view_submission``, ``event``, ``command``...), and the action id, the view's callback id, the
command or the event type, all named by our manifest and blocks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any, Final

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.core.clock import Clock
from bot.core.metrics import Metrics
from bot.core.tracing import span

Dispatch = Callable[[AsyncBoltRequest], Awaitable[BoltResponse]]

DISPATCHED: Final = web.RequestKey("countersign.slack.dispatched", bool)
"""Set on an HTTP request once it reaches Bolt's dispatch (counted there, not at the edge)."""
EDGE_KINDS: Final = {401: "bad_signature", 413: "too_large", 400: "unreadable"}
"""Why the edge refused a request, by its status: the kind it is counted as."""

_KINDS: Final = frozenset(
    {
        "block_actions",
        "view_submission",
        "view_closed",
        "shortcut",
        "message_action",
        "block_suggestion",
        "url_verification",
        "ssl_check",
    }
)


def request_kind(body: Mapping[str, Any]) -> str:
    """What Slack sent: an interactivity payload's type, ``event``, ``command`` or ``other``."""
    kind = body.get("type")
    if kind == "event_callback":
        return "event"
    if isinstance(kind, str) and kind in _KINDS:
        return kind
    if isinstance(body.get("command"), str):
        return "command"
    return "other"


def request_action(body: Mapping[str, Any], kind: str) -> str:
    """Which of ours: the button's action id, the view's callback id, the command, the event's
    type; ``""`` when there is none."""
    match kind:
        case "block_actions":
            actions = body.get("actions")
            first = actions[0] if isinstance(actions, list) and actions else None
            return _text(first, "action_id")
        case "view_submission" | "view_closed":
            return _text(body.get("view"), "callback_id")
        case "command":
            return _text(body, "command")
        case "event":
            return _text(body.get("event"), "type")
        case "shortcut" | "message_action":
            return _text(body, "callback_id")
        case _:
            return ""


def _text(container: object, key: str) -> str:
    value = container.get(key) if isinstance(container, Mapping) else None
    return value if isinstance(value, str) else ""


def response_outcome(status: int) -> str:
    """How Bolt answered: ``ok`` (2xx), ``unhandled`` (404: no listener), ``refused`` (other
    4xx), ``failed`` (5xx)."""
    if 200 <= status < 300:
        return "ok"
    if status == 404:
        return "unhandled"
    return "refused" if status < 500 else "failed"


outcome_of = response_outcome
"""The old name of ``response_outcome``, kept working (``channels.slack.outcomes.outcome_of``
is how a closed question reads)."""


def observed_dispatch(dispatch: Dispatch, metrics: Metrics, clock: Clock) -> Dispatch:
    """``dispatch`` with each request traced and counted (its time on the App's clock)."""

    async def observed(request: AsyncBoltRequest) -> BoltResponse:
        body = request.body if isinstance(request.body, Mapping) else {}
        kind = request_kind(body)
        started = clock.now()
        with span("slack.request", kind=kind, action=request_action(body, kind)) as traced:
            try:
                response = await dispatch(request)
            except Exception:
                traced.set_attribute("outcome", "failed")
                metrics.slack_request(kind, "failed", clock.now() - started)
                raise
            outcome = response_outcome(response.status)
            traced.set_attribute("outcome", outcome)
            traced.set_attribute("http.response.status_code", response.status)
        metrics.slack_request(kind, outcome, clock.now() - started)
        return response

    return observed


def edge_counter(metrics: Metrics, clock: Clock, *, path: str) -> Middleware:
    """An aiohttp middleware counting each request to ``path`` the edge answered without
    dispatching it (a bad signature, a body too large or unreadable), by why."""

    @web.middleware
    async def counted(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path != path:
            return await handler(request)
        started = clock.now()
        try:
            response = await handler(request)
        except web.HTTPException as error:  # a body over the size cap: 413 raised by aiohttp
            _count_edge(request, error.status, metrics, clock.now() - started)
            raise
        _count_edge(request, response.status, metrics, clock.now() - started)
        return response

    return counted


def _count_edge(request: web.Request, status: int, metrics: Metrics, took: timedelta) -> None:
    if request.get(DISPATCHED):
        return  # Bolt answered: counted by its kind in observed_dispatch
    metrics.slack_request(EDGE_KINDS.get(status, "other"), response_outcome(status), took)
