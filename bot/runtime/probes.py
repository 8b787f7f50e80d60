"""The routes an operator's tools read: ``/metrics`` (Prometheus text), ``/readyz`` (readiness),
``/healthz`` (liveness), added to whichever aiohttp application serves the App.

``/metrics`` needs ``Authorization: Bearer <token>`` when ``COUNTERSIGN_METRICS_TOKEN`` is set
(401 otherwise): the Slack ``PORT`` is public, so set it there or serve the probes on a private
``COUNTERSIGN_METRICS_PORT``. ``/healthz`` says the process serves (a liveness probe restarts
it when it does not);
``/readyz`` says this instance can take work now (its database answers), so a load balancer in
front of several instances sends requests elsewhere meanwhile. Neither reads more than one
``SELECT 1``; ``/metrics`` reads the pending pauses with one grouped query, cached a few seconds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Final, Protocol

from aiohttp import web

from bot.core.metrics import CONTENT_TYPE, Metrics, Readiness

METRICS_PATH: Final = "/metrics"
READY_PATH: Final = "/readyz"
HEALTH_PATH: Final = "/healthz"


ReadyCheck = tuple[str, Callable[[], Awaitable[str | None]]]
"""One more thing ``/readyz`` checks beside the App: its name and the problem it finds, if any
(``("slack", ...)``: the bot token, ``channels.slack.readiness``)."""


class Observed(Protocol):
    """What the probes read of an App."""

    @property
    def metrics(self) -> Metrics: ...

    async def readiness(self) -> Readiness: ...


def add_probe_routes(
    application: web.Application,
    observed: Observed,
    *,
    is_open: Callable[[], bool] | None = None,
    checks: Sequence[ReadyCheck] = (),
) -> None:
    """Add ``/metrics`` and ``/readyz`` (the App's readiness and ``checks``); and ``/healthz``
    when ``is_open`` is given (503 once the server closes)."""

    async def metrics(request: web.Request) -> web.Response:
        if not observed.metrics.may_scrape(request.headers.get("Authorization")):
            return web.json_response(
                {"error": "unauthorized"}, status=401, headers={"WWW-Authenticate": "Bearer"}
            )
        body = await observed.metrics.exposition()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    async def readyz(_: web.Request) -> web.Response:
        readiness = await ready(observed, checks)
        return web.json_response(readiness.body(), status=200 if readiness.ready else 503)

    application.router.add_get(METRICS_PATH, metrics)
    application.router.add_get(READY_PATH, readyz)
    if is_open is not None:
        application.router.add_get(HEALTH_PATH, health_handler(is_open))


async def ready(observed: Observed, checks: Sequence[ReadyCheck]) -> Readiness:
    """The App's readiness with the problems ``checks`` find."""
    readiness = await observed.readiness()
    found = []
    for name, check in checks:
        problem = await check()
        if problem is not None:
            found.append((name, problem))
    return Readiness(problems=(*readiness.problems, *found))


def health_handler(is_open: Callable[[], bool]) -> Callable[[web.Request], Awaitable[web.Response]]:
    """``/healthz``: 200 while the server is open, 503 once it closes."""

    async def healthz(_: web.Request) -> web.Response:
        if not is_open():
            return web.json_response({"status": "closing"}, status=503)
        return web.json_response({"status": "ok"})

    return healthz


def probe_app(
    observed: Observed, *, is_open: Callable[[], bool], checks: Sequence[ReadyCheck] = ()
) -> web.Application:
    """An application of the probes alone (``COUNTERSIGN_METRICS_PORT``, beside Socket Mode)."""
    application = web.Application()
    add_probe_routes(application, observed, is_open=is_open, checks=checks)
    return application
