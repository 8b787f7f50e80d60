"""Bolt's single-workspace authorization, made to survive a Slack that cannot be reached.

Bolt learns the bot's ids with ``auth.test`` on the first request; when that call fails it
answers Slack 200 ("please reinstall this app") and runs no listener: after a restart during a
Slack outage, the first click was acknowledged and dropped (issue 24, finding 5). Here the bot
token we already have is enough for what the listeners need:

- a click, a modal submission, a command: authorized with the token (the bot's own ids are not
  needed to answer a person), so the answer is recorded like any other;
- an event (a mention, a message): its listeners need the bot's user id (to tell its own
  messages apart and strip its mention), so it is answered 503 and Slack delivers it again.

``auth.test`` is asked at most once per request, bounded by ``AUTH_TEST_TIMEOUT`` (Slack gives
3 s for the ack), and its answer is kept once it comes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.middleware.authorization.async_internals import _is_no_auth_required
from slack_bolt.middleware.authorization.async_single_team_authorization import (
    AsyncSingleTeamAuthorization,
)
from slack_bolt.middleware.authorization.internals import _is_no_auth_test_call_required
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.payload_utils import is_event
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.core.errors import SetupError
from channels.slack.redaction import log
from channels.slack.webapi import api_error

AUTH_TEST_TIMEOUT: Final = 1.5
"""Seconds ``auth.test`` may take before a request: what is left of Slack's 3 s is the answer's."""
SLACK_UNREACHABLE: Final = "slack unreachable: auth.test failed; Slack delivers the event again"


def use_token_authorization(bolt: AsyncApp, authorization: TokenAuthorization) -> None:
    """Put ``authorization`` where Bolt put its own single-workspace authorization."""
    middleware = bolt._async_middleware_list  # Bolt builds the list in __init__; no setter
    places = [i for i, m in enumerate(middleware) if isinstance(m, AsyncSingleTeamAuthorization)]
    if len(places) != 1:
        raise SetupError("Bolt's single-workspace authorization was not found to replace")
    middleware[places[0]] = authorization


class TokenAuthorization(AsyncSingleTeamAuthorization):
    """``AsyncSingleTeamAuthorization`` that never answers a reachable person's request with
    "please reinstall" because Slack's Web API is down."""

    def __init__(self, client: AsyncWebClient) -> None:
        super().__init__(base_logger=log)
        self._client = client
        self._learning: asyncio.Lock = asyncio.Lock()
        self._refused = False

    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse:
        if _is_no_auth_required(req) or _is_no_auth_test_call_required(req):
            return await super().async_process(req=req, resp=resp, next=next)
        if self.auth_test_result is None and not self._refused:
            await self._learn()
        if self.auth_test_result is not None or self._refused or req.context.team_id is None:
            # known, or Slack refused the token itself: Bolt's own answer ("please reinstall")
            return await super().async_process(req=req, resp=resp, next=next)
        if is_event(req.body):
            return BoltResponse(status=503, body=SLACK_UNREACHABLE)
        req.context.set_authorize_result(
            AuthorizeResult(
                enterprise_id=req.context.enterprise_id,
                team_id=req.context.team_id,
                user_id=req.context.user_id,
                bot_token=self._client.token,
            )
        )
        return await next()

    async def learn(self) -> bool:
        """Ask ``auth.test`` now (at start); whether the bot's ids are known."""
        await self._learn()
        return self.auth_test_result is not None

    async def _learn(self) -> None:
        async with self._learning:
            if self.auth_test_result is not None:
                return
            try:
                result = await asyncio.wait_for(self._client.auth_test(), AUTH_TEST_TIMEOUT)
            except SlackApiError as error:
                status = error.response.status_code
                self._refused = status < 500 and status != 429  # the token itself, not an outage
                log.warning("slack: auth.test failed: %s", api_error(error))
                return
            except (TimeoutError, aiohttp.ClientError, OSError) as error:
                log.warning("slack: auth.test failed: %s", type(error).__name__)
                return
            if isinstance(result, AsyncSlackResponse) and result.get("ok"):
                self.auth_test_result = result
