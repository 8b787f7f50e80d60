"""At start, one ``auth.test``: a revoked or wrong bot token stops the start with one line.

Without it the bot would serve, ack every request, and fail each Web API call after the ack,
where nobody sees it. Slack's answers about the token itself stop the start, and so does a Slack
that cannot be reached at ``SLACK_API_URL`` (a mistyped URL or a blocked network would fail every
call the same way); any other failure of ``auth.test`` is a warning.
"""

from __future__ import annotations

from typing import Final

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.errors import SettingsError
from channels.slack.redaction import web_log
from channels.slack.settings import SlackSettings
from channels.slack.webapi import api_error

REFUSED_TOKEN: Final = frozenset(
    {"invalid_auth", "token_revoked", "not_authed", "account_inactive", "token_expired"}
)
TIMEOUT_SECONDS: Final = 10


async def check_bot_token(settings: SlackSettings) -> None:
    """``SettingsError`` naming ``SLACK_BOT_TOKEN`` when Slack refuses it (installed by OAuth:
    nothing to check, each installation's token is Slack's to refuse)."""
    if settings.oauth:
        return
    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(
            token=settings.bot_token.get_secret_value(),
            base_url=settings.api_url,
            session=session,
            logger=web_log,
            timeout=TIMEOUT_SECONDS,
        )
        try:
            await client.auth_test()
        except SlackApiError as error:
            code = api_error(error)
            if code in REFUSED_TOKEN:
                raise SettingsError(
                    f"SLACK_BOT_TOKEN is refused by Slack ({code}): copy the app's current Bot "
                    "User OAuth Token (OAuth & Permissions, xoxb-...) into .env, reinstalling "
                    "the app to the workspace if it was removed"
                ) from None
            # Slack itself in trouble (HTTP 5xx, rate limited): serve, the calls will retry
            web_log.warning("the bot token could not be checked: auth.test answered %s", code)
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
            reason = " ".join(str(error).split()) or type(error).__name__
            raise SettingsError(
                f"SLACK_API_URL: Slack's Web API cannot be reached at {settings.api_url} "
                f"({reason}): check the URL and the network"
            ) from None
