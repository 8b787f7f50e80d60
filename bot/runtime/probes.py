"""The routes an operator's tools read: ``/metrics`` (Prometheus text), ``/readyz`` (readiness),
``/healthz`` (liveness), added to whichever aiohttp application serves the App.

``/healthz`` says the process serves (a liveness probe restarts it when it does not);
``/readyz`` says this instance can take work now (its database answers), so a load balancer in
front of several instances sends requests elsewhere meanwhile. Neither reads more than one
``SELECT 1``; ``/metrics`` reads the pending pauses with one grouped query, cached a few seconds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final, Protocol

from aiohttp import web

from bot.core.metrics import CONTENT_TYPE, Metrics, Readiness

METRICS_PATH: Final = "/metrics"
READY_PATH: Final = "/readyz"
HEALTH_PATH: Final = "/healthz"


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
) -> None:
    """Add ``/metrics`` and ``/readyz``; and ``/healthz`` when ``is_open`` is given (503 once
    the server closes)."""

    async def metrics(_: web.Request) -> web.Response:
        body = await observed.metrics.exposition()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    async def readyz(_: web.Request) -> web.Response:
        readiness = await observed.readiness()
        return web.json_response(readiness.body(), status=200 if readiness.ready else 503)

    application.router.add_get(METRICS_PATH, metrics)
    application.router.add_get(READY_PATH, readyz)
    if is_open is not None:
        application.router.add_get(HEALTH_PATH, health_handler(is_open))


def health_handler(is_open: Callable[[], bool]) -> Callable[[web.Request], Awaitable[web.Response]]:
    """``/healthz``: 200 while the server is open, 503 once it closes."""

    async def healthz(_: web.Request) -> web.Response:
        if not is_open():
            return web.json_response({"status": "closing"}, status=503)
        return web.json_response({"status": "ok"})

    return healthz


def probe_app(observed: Observed, *, is_open: Callable[[], bool]) -> web.Application:
    """An application of the probes alone (``COUNTERSIGN_METRICS_PORT``, beside Socket Mode)."""
    application = web.Application()
    add_probe_routes(application, observed, is_open=is_open)
    return application
