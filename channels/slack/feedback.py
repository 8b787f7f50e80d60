"""Telling one Slack user something only they see: refusals, "already answered", errors.

Where the user acted decides how: in a channel message → ``chat.postEphemeral`` there; in an
ephemeral message (``/pending``) → its ``response_url``; in the App Home → a direct message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from channels.slack.redaction import log, redact, web_log

NO_LONGER_AVAILABLE: Final = "This request is no longer available."
NO_LONGER_NEEDED: Final = "This request is no longer needed."
NOT_AN_APPROVER: Final = "Sorry, you are not one of the approvers of this request."
NOT_THE_OWNER: Final = "Sorry, only the person who asked may answer this request."


def already_answered(by: str | None) -> str:
    """Who answered, mentioned when it is a Slack user (an API answer names someone else)."""
    if by and by[:1] in ("U", "W") and by.isalnum():
        return f"This request was already answered by <@{by}>."
    return "This request was already answered."


@dataclass(frozen=True, slots=True, kw_only=True)
class Audience:
    """One user, and where they are: the conversation (and thread) or an ephemeral message."""

    user: str
    channel: str | None = None
    thread_ts: str | None = None
    response_url: str | None = None


class Feedback:
    """Sends ephemeral text to an :class:`Audience`; failures are logged, never raised."""

    def __init__(self, client: AsyncWebClient, session: aiohttp.ClientSession | None) -> None:
        self._client = client
        self._session = session

    async def tell(self, audience: Audience, text: str) -> None:
        text = redact(text)
        try:
            if audience.response_url is not None:
                webhook = AsyncWebhookClient(
                    audience.response_url, session=self._session, logger=web_log
                )
                await webhook.send(text=text, response_type="ephemeral", replace_original=False)
            elif audience.channel is not None:
                await self._client.chat_postEphemeral(
                    channel=audience.channel,
                    user=audience.user,
                    text=text,
                    thread_ts=audience.thread_ts,
                )
            else:
                await self._client.chat_postMessage(channel=audience.user, text=text)
        except (SlackApiError, aiohttp.ClientError) as error:
            log.warning(
                "slack: could not tell user %s something: %s", audience.user, type(error).__name__
            )
