"""Marks on the messages a reminder or an escalation posts, so that a resend finds them.

A sweep that told Slack of a nudge and died before recording it leaves the nudge to be sent
again (``ChannelReminder.retried``, with the same ``nudge_key``). Every message a nudge posts
carries Slack message metadata naming the question (its message's conversation and ts: not
secret, unlike the pause id) and the nudge; a retried nudge first looks for its mark where it
would have posted (the question's thread, or the escalation conversation since the question
was asked) and posts nothing that is already there. A lookup that fails is logged and the nudge
is sent: twice rather than never.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, Final

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from channels.slack.redaction import log
from channels.slack.store import MessageRef
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of

NUDGE_EVENT: Final = "countersign_nudge_sent"
"""The metadata ``event_type`` of a message a reminder or an escalation posted."""
PAGE: Final = 200
MAX_PAGES: Final = 10
"""How far a lookup reads (2,000 messages) before it gives up and the nudge is sent again."""


QUESTION_EVENT: Final = "countersign_question_asked"
"""The metadata ``event_type`` of an approval message (a question posted)."""


def question_mark(pause_id: str) -> dict[str, Any]:
    """The metadata of the approval message of ``pause_id``: a digest of the pause id (never
    the id itself), so a send retried after a post whose answer never came (a timeout: Slack may
    have posted it) finds the message instead of asking twice."""
    digest = hashlib.sha256(f"countersign-question:{pause_id}".encode()).hexdigest()[:32]
    return {"event_type": QUESTION_EVENT, "event_payload": {"question": digest}}


END_EVENT: Final = "countersign_run_ended"
"""The metadata ``event_type`` of the message that says a run's end in its thread."""


def end_mark(run_id: str) -> dict[str, Any]:
    """The metadata of the message saying how the run ``run_id`` ended (a digest of its id)."""
    digest = hashlib.sha256(f"countersign-run:{run_id}".encode()).hexdigest()[:32]
    return {"event_type": END_EVENT, "event_payload": {"run": digest}}


def nudge_mark(question: MessageRef, nudge_key: str) -> dict[str, Any]:
    """The metadata of a message posted for ``nudge_key`` about the question at ``question``."""
    return {
        "event_type": NUDGE_EVENT,
        "event_payload": {"question": f"{question.channel_id}/{question.ts}", "nudge": nudge_key},
    }


async def find_marked(
    client: AsyncWebClient,
    mark: dict[str, Any],
    *,
    channel: str,
    thread_ts: str | None = None,
    since: datetime | None = None,
    strict: bool = False,
) -> dict[str, Any] | None:
    """The message carrying ``mark`` in the thread ``thread_ts`` of ``channel`` (or in
    ``channel`` since ``since``), or None: also when Slack could not be read (logged), unless
    ``strict`` (then Slack's failure is raised: the caller must not post blind)."""
    cursor: str | None = None
    oldest = None if since is None else f"{since.timestamp():.6f}"
    try:
        for _ in range(MAX_PAGES):
            if thread_ts is not None:
                response = await client.conversations_replies(
                    channel=channel,
                    ts=thread_ts,
                    include_all_metadata=True,
                    limit=PAGE,
                    cursor=cursor,
                )
            else:
                response = await client.conversations_history(
                    channel=channel,
                    oldest=oldest,
                    include_all_metadata=True,
                    limit=PAGE,
                    cursor=cursor,
                )
            for message in response.get("messages") or []:
                if _carries(message, mark):
                    return dict(message)
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if cursor is None:
                return None
    except (SlackApiError, *TRANSPORT_ERRORS) as error:
        if strict:
            raise
        log.warning("slack: could not look for a resent nudge's message: %s", failure_of(error))
    return None


def _carries(message: Any, mark: dict[str, Any]) -> bool:
    metadata = message.get("metadata") if isinstance(message, dict) else None
    return (
        isinstance(metadata, dict)
        and metadata.get("event_type") == mark["event_type"]
        and metadata.get("event_payload") == mark["event_payload"]
    )
