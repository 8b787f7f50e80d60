"""Slack's agent surfaces for an assistant thread: its status, its session, its answer.

Slack's session statuses are ``processing``, ``active``, ``suspended`` and ``closed``
(``agents.sessions.setStatus``). While the thread's run works, its status says so and its
session is ``processing`` (Slack shows a Stop button); while a question of the thread waits, the
status says whose approval it waits for ("waiting for approval from @finance") and the session
is ``suspended``; its answer is streamed into the thread (``chat.startStream`` /
``chat.stopStream``) and the session is ``active`` again (the thread takes the next message).
A Stop moves it away from ``processing`` too: Slack leaves that to the app.

Slack's guidance on agent progress: updates awaited in order, and not more often than every
few seconds. So each thread has one queue, worked by one kept task: its calls go out in the
order they were asked for, ``gap`` apart on the App's clock, and a status superseded while it
waited is never sent (only the latest). An answer is never dropped: its caller awaits it.
A Slack refusal is one warning: the run goes on.

``agents.sessions.setStatus``, ``chat.startStream`` and ``chat.stopStream`` are called by
name (``api_call``, the JSON slack_sdk's own methods send): the slack-sdk versions we take
(``pyproject.toml``) do not all have methods for them (3.48 has ``agents_sessions_setStatus``
and ``chat_startStream``).

Which threads are assistant threads is known from Slack's events in this process (a thread
started, a message in it): after a restart, a thread is one again from its next message.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.clock import Clock
from channels.slack.redaction import log, redact
from channels.slack.render import approver_mention
from channels.slack.tasks import BackgroundTasks
from channels.slack.threads import SlackThread
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of

STATUS_GAP: Final = timedelta(seconds=2)
WORKING: Final = "is working on your request…"
PROCESSING: Final = "processing"
SUSPENDED: Final = "suspended"
ACTIVE: Final = "active"
SESSION_STATUSES: Final = frozenset({PROCESSING, ACTIVE, SUSPENDED, "closed"})
"""What ``agents.sessions.setStatus`` takes."""
MAX_STREAMED: Final = 12_000
"""``chat.startStream``'s ``markdown_text`` limit."""

Send = Callable[[], Awaitable[None]]


@dataclass(slots=True, kw_only=True)
class _Step:
    send: Send
    is_status: bool
    done: asyncio.Future[None] | None = None
    last: bool = False  # the session's end: nothing more is said of the thread


@dataclass(slots=True)
class _Queue:
    steps: deque[_Step] = field(default_factory=deque)
    working: bool = False
    sent_at: datetime | None = None


class AgentSessions:
    """The assistant threads of this process, and what is said of them, in order."""

    def __init__(
        self,
        *,
        client: AsyncWebClient,
        clock: Clock,
        tasks: BackgroundTasks,
        gap: timedelta = STATUS_GAP,
    ) -> None:
        self._client = client
        self._clock = clock
        self._tasks = tasks
        self._gap = gap
        self._threads: set[str] = set()
        self._queues: dict[str, _Queue] = {}

    def mark(self, thread: SlackThread) -> None:
        """``thread`` is an assistant thread (its events said so)."""
        self._threads.add(thread.thread_id())

    def holds(self, thread_id: str) -> bool:
        return thread_id in self._threads

    # ---------------------------------------------------------------- what is said

    def working(self, thread: SlackThread) -> None:
        self._status(thread, WORKING, PROCESSING)

    def waiting(self, thread: SlackThread, approvers: Sequence[str]) -> None:
        """A question of the thread waits for ``approvers`` (none: for its requester)."""
        who = " ".join(approver_mention(a) for a in approvers) or "you"
        self._status(thread, f"waiting for approval from {who}", SUSPENDED)

    def stopped(self, thread: SlackThread) -> None:
        """The person pressed Stop: the session leaves ``processing`` (Slack does not move it
        by itself), and nothing more is said of the thread's run."""
        self._status(thread, "", ACTIVE, last=True)

    async def answer(self, thread: SlackThread, text: str, *, user: str) -> None:
        """Stream the run's answer (mrkdwn, escaped) into the thread, then end its session;
        returns once both were sent (in the thread's order)."""

        async def streamed() -> None:
            started = await self._client.api_call(
                "chat.startStream",
                json={
                    "channel": thread.channel,
                    "thread_ts": thread.ts,
                    "recipient_team_id": thread.team,
                    "recipient_user_id": user,
                    "markdown_text": redact(text)[:MAX_STREAMED],
                },
            )
            await self._client.api_call(
                "chat.stopStream", json={"channel": thread.channel, "ts": str(started["ts"])}
            )

        done = asyncio.get_running_loop().create_future()
        self._enqueue(
            thread, _Step(send=self._quietly(streamed, "answer"), is_status=False, done=done)
        )
        self._status(thread, "", ACTIVE, last=True)
        await done

    def _status(
        self, thread: SlackThread, status: str, session: str, *, last: bool = False
    ) -> None:
        async def sent() -> None:
            await self._client.assistant_threads_setStatus(
                channel_id=thread.channel, thread_ts=thread.ts, status=status
            )
            await self._client.api_call(
                "agents.sessions.setStatus",
                json={"channel_id": thread.channel, "thread_ts": thread.ts, "status": session},
            )

        step = _Step(send=self._quietly(sent, "status"), is_status=True, last=last)
        self._enqueue(thread, step)

    @staticmethod
    def _quietly(send: Send, what: str) -> Send:
        async def sent() -> None:
            try:
                await send()
            except (SlackApiError, *TRANSPORT_ERRORS) as error:
                log.warning(
                    "slack: the assistant thread's %s was not sent: %s", what, failure_of(error)
                )

        return sent

    # ---------------------------------------------------------------- the queue

    def _enqueue(self, thread: SlackThread, step: _Step) -> None:
        key = thread.thread_id()
        queue = self._queues.setdefault(key, _Queue())
        if step.is_status and queue.steps and queue.steps[-1].is_status:
            queue.steps.pop()  # superseded before it was sent
        queue.steps.append(step)
        if not queue.working:
            queue.working = True
            if self._tasks.spawn(self._work(key, queue), name="slack assistant status") is None:
                _settle(queue)

    async def _work(self, key: str, queue: _Queue) -> None:
        """Send the thread's steps in order, each ``gap`` after the one before (also after
        one sent by an earlier run of this worker)."""
        ended = False
        try:
            while queue.steps:
                if queue.sent_at is not None:
                    await self._clock.sleep(queue.sent_at + self._gap - self._clock.now())
                step = queue.steps.popleft()
                try:
                    await step.send()
                finally:
                    queue.sent_at = self._clock.now()
                    if step.done is not None and not step.done.done():
                        step.done.set_result(None)
                ended = step.last
        finally:
            _settle(queue)
            queue.working = False
            if ended and self._queues.get(key) is queue:
                del self._queues[key]  # the session ended: forget the thread's pace


def _settle(queue: _Queue) -> None:
    """Release whoever awaits a step that will not be sent (the bot is shutting down)."""
    for step in queue.steps:
        if step.done is not None and not step.done.done():
            step.done.set_result(None)
    queue.steps.clear()
