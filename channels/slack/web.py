"""The HTTP face of the bot: ``POST /slack/events`` (events, interactivity, commands), ``/healthz``,
and the App's ``/metrics`` and ``/readyz`` (``bot.runtime.probes``).

Only translation happens here: the raw body becomes a Bolt request, Bolt's answer an HTTP
response. Before Bolt sees a request, the edge (``channels.slack.edge``) checks it, cheapest first,
so that nothing a sender without the signing secret controls reaches a parser:

- a body over the size cap is 413;
- a missing, malformed, stale or wrong signature is 401 (:func:`bad_signature`), judged on the
  raw bytes before anything decodes them;
- a signed body in an unknown charset, not decodable, nested too deep, or that Bolt cannot
  read as JSON or a form is 400.

Signed payloads whose fields have the wrong shapes are refused by a Bolt middleware
(``channels.slack.middlewares.RefuseMalformed``), so Socket Mode gets the same check.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final

from aiohttp import web
from aiohttp.hdrs import CONTENT_TYPE
from aiohttp.typedefs import Middleware
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.runtime.probes import (
    HEALTH_PATH,
    Observed,
    ReadyCheck,
    add_probe_routes,
    health_handler,
)
from channels.slack.edge import RequestSignatures, decoded, too_deep
from channels.slack.middlewares import handled_event
from channels.slack.observing import DISPATCHED
from channels.slack.tasks import AckFirst

EVENTS_PATH: Final = "/slack/events"
TIMESTAMP_HEADER: Final = "X-Slack-Request-Timestamp"
SIGNATURE_HEADER: Final = "X-Slack-Signature"

_UNREADABLE: Final = (ValueError, TypeError, AttributeError, LookupError, RecursionError)
"""What Bolt's parsing and context building raise on a body it cannot read."""


Refused = Callable[[str, Mapping[str, Sequence[str]]], None]


def build_web_app(
    bolt: AsyncApp,
    *,
    signatures: RequestSignatures,
    max_body_bytes: int,
    is_open: Callable[[], bool],
    gate: AckFirst,
    on_refused: Refused | None = None,
    on_handled: Callable[[str], Awaitable[None]] | None = None,
    observed: Observed | None = None,
    dispatch: Callable[[AsyncBoltRequest], Awaitable[BoltResponse]] | None = None,
    ready_checks: Sequence[ReadyCheck] = (),
    middlewares: Sequence[Middleware] = (),
) -> web.Application:
    """An aiohttp application serving ``bolt``; ``is_open`` turns ``/healthz`` to 503 at close.

    Background work waits (``gate``) while a request is being dispatched up to its ack.
    ``on_refused(body, headers)`` hears of each request refused for its signature (401); the
    body is given only when it is text of a sane depth (else ``""``). ``observed``: the App
    whose ``/metrics`` and ``/readyz`` are served too. ``dispatch``: Bolt's, observed
    (``channels.slack.observing``); ``bolt.async_dispatch`` when not given. ``ready_checks``:
    what ``/readyz`` checks beside the App. ``middlewares``: aiohttp's, around every route
    (``channels.slack.observing.edge_counter`` counts what the edge refuses).
    """
    dispatched = dispatch or bolt.async_dispatch

    async def slack_events(request: web.Request) -> web.Response:
        if request.content_length is not None and request.content_length > max_body_bytes:
            raise web.HTTPRequestEntityTooLarge(
                max_size=max_body_bytes, actual_size=request.content_length
            )
        raw = await request.read()  # over client_max_size: 413
        timestamp = request.headers.get(TIMESTAMP_HEADER)
        if not signatures.valid(raw, timestamp, request.headers.get(SIGNATURE_HEADER)):
            if on_refused is not None:
                headers = {name: request.headers.getall(name) for name in request.headers}
                on_refused(_readable(raw, request.headers.get(CONTENT_TYPE)), headers)
            return bad_signature(request)
        text = decoded(raw, request.headers.get(CONTENT_TYPE))
        if text is None:
            return _bad_request("the body is not UTF-8 (or its charset is not one we read)")
        if too_deep(text):
            return _bad_request("the body nests too deep")
        try:
            bolt_request = AsyncBoltRequest(
                body=text,
                query=request.query_string,
                headers={name: request.headers.getall(name) for name in request.headers},
            )
        except _UNREADABLE:
            return _bad_request("the body is neither JSON nor a form Slack sends")
        request[DISPATCHED] = True
        with gate.acking():
            response = await dispatched(bolt_request)
        event_id = handled_event(bolt_request)
        if event_id is not None and response.status == 200 and on_handled is not None:
            await on_handled(event_id)  # everything before the ack is done: retries drop it
        return await to_aiohttp_response(response)

    application = web.Application(client_max_size=max_body_bytes, middlewares=middlewares)
    application.router.add_post(EVENTS_PATH, slack_events)
    if observed is None:
        application.router.add_get(HEALTH_PATH, health_handler(is_open))
    else:
        add_probe_routes(application, observed, is_open=is_open, checks=ready_checks)
    return application


def _readable(raw: bytes, content_type: str | None) -> str:
    """An unverified body, for the refusal's log line to look for a team id in: only text that
    parsing cannot choke on."""
    text = decoded(raw, content_type)
    return "" if text is None or too_deep(text) else text


def bad_signature(request: web.Request) -> web.Response:
    """The one place a request without a valid signature is refused (401, nothing parsed)."""
    return web.json_response({"error": "invalid request"}, status=401)


def _bad_request(reason: str) -> web.Response:
    return web.json_response({"error": reason}, status=400)
