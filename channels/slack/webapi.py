"""The Web API client the bot calls Slack with, and reading its errors.

Calls go to ``SLACK_API_URL`` (tests point it at a stub) through one shared aiohttp session, and
retry on connection errors, on 429 (after ``Retry-After``, twice) and on 500/503. Retries happen
in the background work after an ack, never before one: calls made before an ack go through
``without_waits`` (no retries: a 429 is "try again" at once, never a sleep on ``Retry-After``).

Each call is a span (``countersign.slack.api``: method, outcome) and is counted by method and
outcome (``countersign_slack_api_calls``: ``ok``, Slack's error
code, ``ratelimited`` once the retries are spent, ``connection_error``), and each retry by method
and reason (``countersign_slack_api_retries``). Calls wait for a place in their method
family's pool (``channels.slack.call_pools``): a family Slack hangs holds only its own.
"""

from __future__ import annotations

import copy
from typing import Any, Final

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.core.metrics import Metrics
from bot.core.tracing import Span, span
from channels.slack.call_pools import CONNECTIONS, CallPools
from channels.slack.redaction import web_log
from channels.slack.settings import SlackSettings

CONNECTION_ERROR: Final = "connection_error"
TRANSPORT_ERRORS: Final = (aiohttp.ClientError, TimeoutError, OSError)
"""What a call raises when Slack could not be reached or did not answer in time (no
``SlackApiError``: no answer came)."""
TRANSIENT_CODES: Final = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)


def slack_session(settings: SlackSettings) -> aiohttp.ClientSession:
    """The bot's one aiohttp session, every call bounded by ``SLACK_API_TIMEOUT_SECONDS``
    (slack_sdk's own 30 s applies only to a session it makes itself; aiohttp's default is 300 s).
    Build it inside a running event loop."""
    seconds = settings.api_timeout_seconds
    return aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=seconds, sock_connect=min(seconds, 5.0)),
        connector=aiohttp.TCPConnector(limit=CONNECTIONS),
    )


def web_client(
    settings: SlackSettings,
    session: aiohttp.ClientSession | None,
    *,
    metrics: Metrics | None = None,
    kind: type[CountedWebClient] | None = None,
) -> AsyncWebClient:
    """The bot's client; its calls and retries counted on ``metrics`` when given."""
    handlers: list[tuple[AsyncRetryHandler, str]] = [
        (AsyncConnectionErrorRetryHandler(), "connection"),
        (AsyncRateLimitErrorRetryHandler(max_retry_count=2), "ratelimited"),
        (AsyncServerErrorRetryHandler(), "server_error"),
    ]
    if metrics is None:
        return AsyncWebClient(
            token=_token_of(settings),
            base_url=settings.api_url,
            session=session,
            logger=web_log,
            timeout=max(1, round(settings.api_timeout_seconds)),
            retry_handlers=[handler for handler, _ in handlers],
        )
    return (kind or CountedWebClient)(
        metrics,
        token=_token_of(settings),
        base_url=settings.api_url,
        session=session,
        logger=web_log,
        timeout=max(1, round(settings.api_timeout_seconds)),
        retry_handlers=[CountedRetries(h, reason, metrics) for h, reason in handlers],
    )


def without_waits(client: AsyncWebClient) -> AsyncWebClient:
    """``client`` for calls made before an ack (Slack waits 3 s for it): the same token, session,
    timeout and counting, but no retries, so it never sleeps on a 429's ``Retry-After`` or a
    backoff; the caller answers "try again" at once instead (``retry_after`` says when)."""
    hasty = copy.copy(client)
    hasty.retry_handlers = []
    return hasty


def retry_after(error: BaseException | None) -> float | None:
    """The seconds a 429's ``Retry-After`` asks for, if ``error`` is one."""
    if not isinstance(error, SlackApiError) or error.response.status_code != 429:
        return None
    headers = error.response.headers or {}
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    if isinstance(value, list):
        value = value[0] if value else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError):
        return None


def _token_of(settings: SlackSettings) -> str | None:
    """The one workspace's token; none when installed by OAuth (each call names its own)."""
    return settings.bot_token.get_secret_value() or None


def _basic_auth_as_header(options: dict[str, Any]) -> dict[str, Any]:
    """The app's credentials of an OAuth call (``oauth.v2.access``: the code exchange, a token
    refresh) as an ``Authorization`` header: slack_sdk makes an ``aiohttp.BasicAuth`` of them,
    which aiohttp 3.14 deprecates (a warning on every install and refresh)."""
    auth = options.get("auth")
    if not isinstance(auth, dict):
        return options
    basic = aiohttp.encode_basic_auth(auth["client_id"], auth["client_secret"])
    headers = {**(options.get("headers") or {}), "Authorization": basic}
    return {**options, "auth": None, "headers": headers}


class CountedWebClient(AsyncWebClient):
    """``AsyncWebClient`` whose every call is counted by method and outcome."""

    def __init__(self, metrics: Metrics, **options: Any) -> None:
        super().__init__(**options)
        self._metrics = metrics
        self._pools = CallPools()

    async def api_call(self, api_method: str, **options: Any) -> AsyncSlackResponse:
        options = _basic_auth_as_header(options)
        async with self._pools.slot(api_method):  # a slow family holds only its own pool
            return await self._counted_call(api_method, **options)

    async def _counted_call(self, api_method: str, **options: Any) -> AsyncSlackResponse:
        with span("slack.api", method=api_method) as traced:
            try:
                response = await super().api_call(api_method, **options)
            except SlackApiError as error:
                self._done(traced, api_method, api_error(error))
                raise
            except (TimeoutError, aiohttp.ClientError):
                self._done(traced, api_method, CONNECTION_ERROR)
                raise
            self._done(traced, api_method, "ok")
            return response

    def _done(self, traced: Span, api_method: str, outcome: str) -> None:
        traced.set_attribute("outcome", outcome)
        self._metrics.slack_call(api_method, outcome)


class CountedRetries(AsyncRetryHandler):
    """A retry handler of slack_sdk's, each retry it grants counted with ``reason``."""

    def __init__(self, inner: AsyncRetryHandler, reason: str, metrics: Metrics) -> None:
        super().__init__(inner.max_retry_count, inner.interval_calculator)
        self._inner = inner
        self._reason = reason
        self._metrics = metrics

    async def can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        retry = await self._inner.can_retry_async(
            state=state, request=request, response=response, error=error
        )
        if retry:
            self._metrics.slack_retry(request.url.rsplit("/", 1)[-1], self._reason)
        return retry

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        await self._inner.prepare_for_next_attempt_async(
            state=state, request=request, response=response, error=error
        )


def is_transient(error: BaseException) -> bool:
    """Whether Slack failing with ``error`` may well succeed later: no answer came (refused,
    reset, timed out), or Slack answered 5xx or 429 (``ratelimited``) once the retries were
    spent. A bad channel, a bot not in it, a bad token are not: trying again changes nothing."""
    if isinstance(error, SlackApiError):
        status = error.response.status_code
        return status >= 500 or status == 429 or api_error(error) in TRANSIENT_CODES
    return isinstance(error, TRANSPORT_ERRORS)


def failure_of(error: BaseException) -> str:
    """A Slack call's failure in a word, for a log line: Slack's error code, else the kind."""
    return api_error(error) if isinstance(error, SlackApiError) else type(error).__name__


def api_error(error: SlackApiError) -> str:
    """Slack's error code (``channel_not_found``...), else the HTTP status."""
    data = error.response.data
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return str(data["error"])
    return f"HTTP {error.response.status_code}"
