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

A recording that fails at once (the database refuses the connection, a pooled connection the
server closed, a serialization failure) is not Bolt's 500: Slack is answered 200 and the person
told ``NOT_RECORDED`` (a click, a thread reply: ephemerally; a modal: as its error, the modal
staying open to be sent again). Nothing was recorded, the question keeps waiting and its buttons
stay. Refusals that are the answer's own business (already answered, not allowed, the proposal
changed) are outcomes, not failures: they keep their words. Every answer recorded before its ack
goes through here (``click_recorded``, ``modal_recorded``, ``failed``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta
from typing import Any, Final, TypeVar

from slack_bolt.context.ack.async_ack import AsyncAck

from bot.core.clock import Clock, wait_with_timeout
from bot.core.errors import CountersignError
from bot.store.interruptions import is_interruption
from channels.kit.said import refusal_text
from channels.slack.answering import ModalAnswer
from channels.slack.feedback import Audience, Feedback
from channels.slack.redaction import log
from channels.slack.render import escape
from channels.slack.tasks import BackgroundTasks

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
NotRecorded = Callable[[str], T]
"""What a recording that failed becomes, given the words the person is told."""


class LateRefusalError(Exception):
    """A modal's answer recorded late was refused (by its errors): nothing was recorded."""


class LateAnswers:
    """Records a click within Slack's time, or tells the person and finishes it later."""

    def __init__(self, clock: Clock, feedback: Feedback) -> None:
        self._clock = clock
        self._feedback = feedback

    async def within_budget(
        self, recording: asyncio.Future[T], not_recorded: NotRecorded[T]
    ) -> T | None:
        """What follows the ack if the recording ends within ``RECORD_BUDGET``; else ``None``
        (the recording goes on: hand it to ``finish_late`` after the ack). A recording that
        failed is ``not_recorded`` of what the person is told (``failure_words``)."""
        try:
            return await wait_with_timeout(self._clock, asyncio.shield(recording), RECORD_BUDGET)
        except TimeoutError:
            if not recording.done() or recording.cancelled():
                return None
            error = recording.exception()
            return recording.result() if error is None else not_recorded(failure_words(error))
        except Exception as error:  # the database refused at once: never Bolt's 500
            return not_recorded(failure_words(error))

    def failed(self, error: Exception, audience: Audience) -> AfterAck:
        """What follows the ack of an answer whose recording failed: telling the person."""
        return self.telling(audience, failure_words(error))

    def telling(self, audience: Audience, text: str) -> AfterAck:
        async def tell() -> None:
            await self._feedback.tell(audience, text)

        return tell

    async def click_recorded(
        self,
        ack: AsyncAck,
        recording: Coroutine[Any, Any, AfterAck],
        audience: Audience,
        tasks: BackgroundTasks,
        name: str,
    ) -> None:
        """A click's answer recorded before the 200: Slack never sends an acknowledged click
        again; one not recorded within Slack's 3 s is answered anyway and finished after it; one
        that failed is answered and told to try again. The rest follows the ack."""
        future = asyncio.ensure_future(recording)
        after = await self.within_budget(future, lambda text: self.telling(audience, text))
        await ack()
        if after is None:
            tasks.spawn(self.finish_late(future, audience), name="slack late")
        else:
            tasks.spawn(after(), name=f"slack {name}")

    async def modal_recorded(
        self,
        ack: AsyncAck,
        recording: Coroutine[Any, Any, ModalAnswer],
        audience: Audience,
        tasks: BackgroundTasks,
        *,
        block: str,
        name: str,
    ) -> None:
        """A modal's answer recorded before the 200: its errors keep it open (nothing recorded),
        a recording that failed too (said at ``block``: sent again as it is); not recorded within
        Slack's 3 s, the modal is closed, the person told, and the recording finished after."""
        future = asyncio.ensure_future(recording)
        answer = await self.within_budget(future, lambda text: ModalAnswer(errors={block: text}))
        if answer is None:
            await ack()
            tasks.spawn(self.finish_late(after_of(future), audience), name=f"slack {name}")
        elif answer.errors:
            await ack(response_action="errors", errors=answer.errors)
        else:
            await ack()
            tasks.spawn(answer.after(), name=f"slack {name}")

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


def failure_words(error: BaseException) -> str:
    """What a person is told of an answer whose recording raised (nothing was recorded): the
    runtime's words for its own refusal, else ``NOT_RECORDED`` (the database or the network
    failed: logged, a failure that is neither with its traceback)."""
    if isinstance(error, CountersignError):
        return escape(refusal_text(error), 600)
    if is_interruption(error):
        log.warning("slack: an answer was not recorded, the database failed: %s", _named(error))
    else:
        log.error("slack: an answer was not recorded", exc_info=error)
    return NOT_RECORDED


def _named(error: BaseException) -> str:
    cause = error.__cause__ or getattr(error, "orig", None)
    return type(error).__name__ + ("" if cause is None else f" ({type(cause).__name__})")
