"""The HTTP face of the bot: ``POST /slack/events`` (events, interactivity, commands), ``/healthz``.

Only translation happens here: the raw body becomes a Bolt request, Bolt's answer an HTTP
response. Bolt verifies the signature (401 when bad, stale or missing). What Bolt would turn
into a 500 is refused first: a body over the size cap is 413, a body that is not JSON or a
form (or not an object) is 400.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

from bot.slack.tasks import AckFirst

EVENTS_PATH: Final = "/slack/events"
HEALTH_PATH: Final = "/healthz"


Refused = Callable[[str, Mapping[str, Sequence[str]]], None]


def build_web_app(
    bolt: AsyncApp,
    *,
    max_body_bytes: int,
    is_open: Callable[[], bool],
    gate: AckFirst,
    on_refused: Refused | None = None,
) -> web.Application:
    """An aiohttp application serving ``bolt``; ``is_open`` turns ``/healthz`` to 503 at close.

    Background work waits (``gate``) while a request is being dispatched up to its ack.
    ``on_refused(body, headers)`` hears of each request Bolt refused for its signature (401).
    """

    async def slack_events(request: web.Request) -> web.Response:
        if request.content_length is not None and request.content_length > max_body_bytes:
            raise web.HTTPRequestEntityTooLarge(
                max_size=max_body_bytes, actual_size=request.content_length
            )
        if not _plausible_timestamp(request.headers.get("X-Slack-Request-Timestamp")):
            # slack_sdk's verifier would raise on int(...) and Bolt would answer 500
            return web.json_response({"error": "invalid request"}, status=401)
        try:
            raw = await request.text()  # over client_max_size: 413
        except UnicodeDecodeError:
            return _bad_request("the body is not UTF-8")
        try:
            bolt_request = AsyncBoltRequest(
                body=raw,
                query=request.query_string,
                headers={name: request.headers.getall(name) for name in request.headers},
            )
        except (ValueError, TypeError, AttributeError):
            return _bad_request("the body is neither JSON nor a form Slack sends")
        with gate.acking():
            response = await bolt.async_dispatch(bolt_request)
        if response.status == 401 and on_refused is not None:
            on_refused(raw, bolt_request.headers)
        return await to_aiohttp_response(response)

    async def healthz(request: web.Request) -> web.Response:
        if not is_open():
            return web.json_response({"status": "closing"}, status=503)
        return web.json_response({"status": "ok"})

    application = web.Application(client_max_size=max_body_bytes)
    application.router.add_post(EVENTS_PATH, slack_events)
    application.router.add_get(HEALTH_PATH, healthz)
    return application


def _plausible_timestamp(value: str | None) -> bool:
    """Missing is Bolt's to refuse (401); present, it must be whole seconds."""
    return value is None or (value.isascii() and value.isdigit())


def _bad_request(reason: str) -> web.Response:
    return web.json_response({"error": reason}, status=400)
