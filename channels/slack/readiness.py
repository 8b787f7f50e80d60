"""``/readyz``'s Slack check (``COUNTERSIGN_READYZ_SLACK``): does Slack take the bot token?

Installed by OAuth there is no one token: each workspace has its own, and one workspace that
removed the app must not take the bot out of its load balancer for all the others. The check is
then whether Slack's Web API answers at all (``api.test``, no token).

One ``auth.test``, its answer kept ``KEPT`` on the App's clock, so a load balancer polling every
second asks Slack twice a minute at most; an answer not given within ``TIMEOUT`` is a problem.
The problem is Slack's error code (``invalid_auth``, ``ratelimited``...) or ``unreachable``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.clock import Clock, wait_with_timeout
from channels.slack.webapi import api_error

KEPT: Final = timedelta(seconds=30)
TIMEOUT: Final = timedelta(seconds=2)
NAME: Final = "slack"


class SlackAuthCheck:
    """The bot token's ``auth.test``, as ``/readyz`` asks it: the problem, or ``None``."""

    def __init__(self, client: AsyncWebClient, clock: Clock, *, oauth: bool = False) -> None:
        self._client = client
        self._oauth = oauth
        self._clock = clock
        self._asked_at: datetime | None = None
        self._problem: str | None = None

    async def __call__(self) -> str | None:
        now = self._clock.now()
        if self._asked_at is not None and now - self._asked_at < KEPT:
            return self._problem
        self._problem = await self._ask()
        self._asked_at = now
        return self._problem

    async def _ask(self) -> str | None:
        try:
            asked = self._client.api_test() if self._oauth else self._client.auth_test()
            await wait_with_timeout(self._clock, asked, TIMEOUT)
        except SlackApiError as error:
            return api_error(error)
        except (TimeoutError, aiohttp.ClientError):
            return "unreachable"
        return None
