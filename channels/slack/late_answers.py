"""A click whose answer cannot be recorded within Slack's 3 s (a database frozen or failing over).

Bolt answers 404 ("unhandled request") when a listener has not acked after 3 s, while the
recording goes on: the person saw an error for an approval that then went through (issue 24,
finding 8). Here the recording gets ``RECORD_BUDGET``; if it is not done by then, Slack is
answered 200 at once and the person told plainly, ephemerally, that the answer is not recorded
yet. The recording is kept (never cancelled: its transaction may already be committing), and
when it ends the person is told how it ended, and the run goes on as with any answer — so an
answer that is recorded late is never unacknowledged: its message is updated to show it, and
its clicker is told it was recorded after all. A recording that failed says "try again".

A modal's submission (a reject's reason, an edit, an answer instead) is handled the same way:
not recorded in time, the modal closes (200) and the person is told; a late recording that the
runtime refused (its errors can no longer be shown in the closed modal) says "try again".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta
from typing import Any, Final, TypeVar

from bot.core.clock import Clock, wait_with_timeout
from channels.slack.answering import ModalAnswer
from channels.slack.feedback import Audience, Feedback
from channels.slack.redaction import log

RECORD_BUDGET: Final = timedelta(seconds=2.2)
"""What a click's recording may take before Slack is answered anyway (Slack waits 3 s; the
request's signature check and the ack's trip take the rest)."""
NOT_RECORDED_YET: Final = (
    "Your answer could not be recorded in time: the database is slow to answer. "
    "It may still be recorded in a moment; you will be told here either way."
)
RECORDED_LATE: Final = "Your answer was recorded after all; the request's message shows it."
NOT_RECORDED: Final = "Your answer could not be recorded. Please try again in a minute."

AfterAck = Callable[[], Coroutine[Any, Any, None]]
T = TypeVar("T")


class LateRefusalError(Exception):
    """A modal's answer recorded late was refused (by its errors): nothing was recorded."""


class LateAnswers:
    """Records a click within Slack's time, or tells the person and finishes it later."""

    def __init__(self, clock: Clock, feedback: Feedback) -> None:
        self._clock = clock
        self._feedback = feedback

    async def within_budget(self, recording: asyncio.Future[T]) -> T | None:
        """What follows the ack if the recording ends within ``RECORD_BUDGET``; else ``None``
        (the recording goes on: hand it to ``finish_late`` after the ack)."""
        try:
            return await wait_with_timeout(self._clock, asyncio.shield(recording), RECORD_BUDGET)
        except TimeoutError:
            if recording.done() and not recording.cancelled():
                return recording.result()
            return None

    async def finish_late(self, recording: Awaitable[AfterAck], audience: Audience) -> None:
        """After the ack of a click not recorded in time: tell the person, wait for the
        recording, tell them how it ended, and go on as with any answer."""
        await self._feedback.tell(audience, NOT_RECORDED_YET)
        try:
            after = await recording
        except Exception as error:  # nothing was recorded: the buttons stay, the person retries
            log.warning("slack: a click's answer was not recorded: %s", type(error).__name__)
            await self._feedback.tell(audience, NOT_RECORDED)
            return
        await self._feedback.tell(audience, RECORDED_LATE)
        await after()


async def after_of(recording: Awaitable[ModalAnswer]) -> AfterAck:
    """What follows a modal's answer recorded late; ``LateRefusalError`` when it was refused."""
    answer = await recording
    if answer.errors:
        raise LateRefusalError(", ".join(answer.errors))
    return answer.after
