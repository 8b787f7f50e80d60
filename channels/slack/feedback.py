"""Telling one Slack user something only they see: refusals, "already answered", errors.

Where the user acted decides how: in a channel message → ``chat.postEphemeral`` there; in an
ephemeral message (``/pending``) → its ``response_url``; in the App Home → a direct message.

Best-effort, not owed (``channels.slack.outbox``): an ephemeral reply to the person who just
acted is worth only now (its ``response_url`` expires in 30 minutes, and an ephemeral cannot be
updated or looked up to be said once). A failure of any kind (Slack's error, a refused or
timed-out connection, a ``response_url`` answered with an error) is logged and never raised
into the listener: what the person did is recorded already, or was not and they may retry.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from channels.kit.texts import (
    NO_LONGER_AVAILABLE,
    NO_LONGER_NEEDED,
    NOT_AN_APPROVER,
    NOT_THE_OWNER,
)
from channels.kit.texts import already_answered as answered_first
from channels.slack.redaction import log, redact, web_log
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of

__all__ = [
    "NOT_AN_APPROVER",
    "NOT_THE_OWNER",
    "NO_LONGER_AVAILABLE",
    "NO_LONGER_NEEDED",
    "Audience",
    "Feedback",
    "already_answered",
]


def already_answered(by: str | None) -> str:
    """Who answered, mentioned when it is a Slack user (an API answer names someone else)."""
    if by and by[:1] in ("U", "W") and by.isalnum():
        return answered_first(f"<@{by}>")
    return answered_first(None)


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
                sent = await webhook.send(
                    text=text, response_type="ephemeral", replace_original=False
                )
                if sent.status_code >= 400:  # the webhook client answers errors, raising none
                    _not_told(audience, f"HTTP {sent.status_code}")
            elif audience.channel is not None:
                await self._client.chat_postEphemeral(
                    channel=audience.channel,
                    user=audience.user,
                    text=text,
                    thread_ts=audience.thread_ts,
                )
            else:
                await self._client.chat_postMessage(channel=audience.user, text=text)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            _not_told(audience, failure_of(error))


def _not_told(audience: Audience, failure: str) -> None:
    log.warning("slack: could not tell user %s something: %s", audience.user, failure)
