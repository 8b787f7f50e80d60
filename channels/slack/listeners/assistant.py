"""Slack's assistant pane: ``assistant_thread_started``, a message in an assistant thread, and
``agent_session_stopped``.

Bolt's ``AsyncAssistant`` (a global middleware) routes the assistant thread's events: a thread
started is shown the suggested prompts (``COUNTERSIGN_ASSISTANT_PROMPTS``); a person's message
in it answers the question waiting there (read and recorded before the ack, as any thread
reply) or else starts the work with its words, in that thread. The agent session's Stop
cancels the thread's run through the runtime (``App.cancel(..., by=)``): its questions are
withdrawn, and their messages say who stopped them.

``agent_session_stopped`` is read as ``{"channel" | "channel_id", "thread_ts", "user" |
"user_id"}`` (also under ``assistant_thread`` or ``session``): slack_bolt has no helper of its
own for it in the versions we take.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.middleware.async_custom_middleware import AsyncCustomMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError

from bot.core.errors import UnknownThreadError
from channels.slack import redaction
from channels.slack.agent_sessions import AgentSessions
from channels.slack.answering import AfterAck
from channels.slack.listeners.messages import AFTER_ACK, message_of, record_reply_first
from channels.slack.payloads import SlackPayload, tenant_of, text_at
from channels.slack.redaction import log
from channels.slack.services import SlackServices
from channels.slack.threads import SlackThread
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of

Prompt = tuple[str, str]


def register(
    bolt: AsyncApp,
    services: SlackServices,
    sessions: AgentSessions,
    prompts: Sequence[Prompt] = (),
) -> None:
    assistant = EventsOnlyAssistant(logger=redaction.bolt_log)
    flows, tasks, app = services.flows, services.tasks, services.app

    async def started(event: SlackPayload, context: AsyncBoltContext) -> None:
        thread = _assistant_thread(event.get("assistant_thread"), context.team_id)
        if thread is None:
            return
        sessions.mark(thread)
        if not prompts or context.client is None:
            return
        try:
            await context.client.assistant_threads_setSuggestedPrompts(
                channel_id=thread.channel,
                thread_ts=thread.ts,
                prompts=[{"title": title, "message": message} for title, message in prompts],
            )
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: the suggested prompts were not set: %s", failure_of(error))

    async def context_changed() -> None:
        """Nothing kept: the thread's channel context is not read (Bolt's default would write
        it into the thread's first message)."""

    async def user_message(event: SlackPayload, context: AsyncBoltContext) -> None:
        message = message_of(event, context)
        if message is None or message.thread_ts is None:
            return
        thread = SlackThread(team=message.team, channel=message.channel, ts=message.thread_ts)
        sessions.mark(thread)
        after: AfterAck | None = context.get(AFTER_ACK)
        if after is not None:  # an answer to the question waiting here
            tasks.spawn(after(), name="slack assistant reply")
            return
        sessions.working(thread)
        tasks.spawn(
            flows.start(
                thread, tenant_id=message.tenant, user=message.user, text=message.text, reply=True
            ),
            name="slack assistant message",
        )

    async def stopped(event: SlackPayload, context: AsyncBoltContext) -> None:
        place = _stopped_place(event, context.team_id)
        tenant = tenant_of(context)
        if place is None or tenant is None:
            return
        thread, user = place
        sessions.stopped(thread)
        tasks.spawn(_stop(thread, tenant, user), name="slack agent session stopped")

    async def _stop(thread: SlackThread, tenant: str, user: str | None) -> None:
        try:
            await app.cancel(thread.thread_id(), tenant_id=tenant, by=user)
        except UnknownThreadError:
            return  # nothing ran in that thread

    assistant.thread_started(started)
    assistant.thread_context_changed(context_changed)
    reply_first = AsyncCustomMiddleware(
        app_name=bolt.name, func=record_reply_first(services), base_logger=redaction.bolt_log
    )
    # Bolt types it as one middleware, but builds the listener from a list of them
    assistant.user_message(user_message, middleware=[reply_first])  # type: ignore[arg-type]
    bolt.use(assistant)
    bolt.event("agent_session_stopped")(stopped)


class EventsOnlyAssistant(AsyncAssistant):
    """Bolt's ``AsyncAssistant``, passing anything but an Events API event straight on.

    Every listener it holds matches an event (a thread started, its context changed, a message
    in it), and so does its own check for a message's other sub-events; a button click, a
    modal's submission or a slash command matches none of them. Bolt still tried each of its
    matchers on every request, each building the whole set of listener arguments first: three
    of them on every click, before its ack (issue 32)."""

    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse | None:
        if req.body.get("type") != "event_callback":
            return await next()
        return await super().async_process(req=req, resp=resp, next=next)


def _assistant_thread(value: object, team: str | None) -> SlackThread | None:
    if not isinstance(value, Mapping) or team is None:
        return None
    channel, ts = _text(value, "channel_id", "channel"), _text(value, "thread_ts")
    if channel is None or ts is None:
        return None
    return SlackThread(team=team, channel=channel, ts=ts)


def _stopped_place(event: SlackPayload, team: str | None) -> tuple[SlackThread, str | None] | None:
    """The thread an agent session's Stop names, and who pressed it."""
    for where in (event, event.get("assistant_thread"), event.get("session")):
        thread = _assistant_thread(where, team)
        if thread is not None:
            user = text_at(event, "user") or _text(where, "user_id", "user")
            return thread, user
    return None


def _text(value: object, *keys: str) -> str | None:
    if not isinstance(value, Mapping):
        return None
    for key in keys:
        found: Any = value.get(key)
        if isinstance(found, str) and found:
            return found
    return None
