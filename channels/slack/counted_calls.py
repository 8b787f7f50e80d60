"""Bolt's own Web API calls, counted like the bot's (``countersign_slack_api_calls``).

Bolt makes a client of its own for each request (``context.client``: the bot's token, base URL,
session and retry handlers, but a plain ``AsyncWebClient``), and its authorization calls
``auth.test`` with it; a listener given ``client`` calls with it too. :class:`CountBoltCalls`,
run before Bolt authorizes, puts a counted copy in its place, so those calls are counted and
traced (``countersign.slack.api``) with the rest.
"""

from __future__ import annotations

from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.metrics import Metrics
from channels.slack.middlewares import Next
from channels.slack.webapi import CountedWebClient


class CountBoltCalls(AsyncMiddleware):
    """Replaces the request's ``context.client`` with a counted copy of it."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Next
    ) -> BoltResponse | None:
        client = req.context.client
        if not isinstance(client, CountedWebClient):
            req.context["client"] = counted_copy(client, self._metrics)
        return await next()


def counted_copy(client: AsyncWebClient, metrics: Metrics) -> CountedWebClient:
    """``client`` as Bolt made it, each call counted on ``metrics``."""
    return CountedWebClient(
        metrics,
        token=client.token,
        base_url=client.base_url,
        timeout=client.timeout,
        ssl=client.ssl,
        proxy=client.proxy,
        session=client.session,
        trust_env_in_session=client.trust_env_in_session,
        headers=dict(client.headers),
        team_id=client.default_params.get("team_id"),
        logger=client.logger,
        retry_handlers=None if client.retry_handlers is None else list(client.retry_handlers),
    )
