"""The Web API client the bot calls Slack with, and reading its errors.

Calls go to ``SLACK_API_URL`` (tests point it at a stub) through one shared aiohttp session, and
retry on connection errors, on 429 (after ``Retry-After``, twice) and on 500/503. Retries happen
in the background work after an ack, never before one.
"""

from __future__ import annotations

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from channels.slack.redaction import web_log
from channels.slack.settings import SlackSettings


def web_client(settings: SlackSettings, session: aiohttp.ClientSession | None) -> AsyncWebClient:
    return AsyncWebClient(
        token=settings.bot_token.get_secret_value(),
        base_url=settings.api_url,
        session=session,
        logger=web_log,
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(),
            AsyncRateLimitErrorRetryHandler(max_retry_count=2),
            AsyncServerErrorRetryHandler(),
        ],
    )


def api_error(error: SlackApiError) -> str:
    """Slack's error code (``channel_not_found``...), else the HTTP status."""
    data = error.response.data
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return str(data["error"])
    return f"HTTP {error.response.status_code}"
