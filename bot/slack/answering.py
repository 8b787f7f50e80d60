"""Answering a pause from Slack: check, resume, then show the outcome where it was asked.

Clicks, modal submissions and thread replies all end here, after their ack. A refusal or a
pause that no longer waits is told to the user alone; nothing is resumed. An answer the
runtime took updates the approval message (buttons removed) and, when the run ended, its thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final

from bot.app import App
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import PauseAnswerer, PauseResolution, PauseStatus
from bot.core.errors import (
    CountersignError,
    DtoValidationError,
    NotPausedError,
    PauseAnswererError,
    ReplyInterpreterMissingError,
    ThreadOwnerError,
    UninterpretableReplyError,
    UnknownPauseError,
)
from bot.core.results import ExecutionResult, PauseView
from bot.slack.authorization import Authorizer
from bot.slack.conversations import Conversations
from bot.slack.feedback import (
    NO_LONGER_AVAILABLE,
    NO_LONGER_NEEDED,
    NOT_THE_OWNER,
    Audience,
    Feedback,
    already_answered,
)
from bot.slack.gateway import SlackGateway, quote
from bot.slack.outcomes import outcome_of, verdict
from bot.slack.render import escape
from interpreters.keyword import (
    APPROVALS_UNDERSTOOD,
    HOW_TO_ANSWER,
    REJECTION_WITH_REASON,
    REJECTIONS_UNDERSTOOD,
)

HOW_TO_REPLY: Final = (
    "I understand these replies:\n"
    f"• to approve: {', '.join(APPROVALS_UNDERSTOOD[:-1])} or {APPROVALS_UNDERSTOOD[-1]}\n"
    f"• to reject: {', '.join(REJECTIONS_UNDERSTOOD[:-1])} or {REJECTIONS_UNDERSTOOD[-1]}, "
    f"with your reason after a colon, like {REJECTION_WITH_REASON}\n"
    "Or use the buttons on the message."
)
"""What a thread reply that was not understood is told: the words understood, in plain words."""
USE_THE_BUTTONS: Final = (
    "This request cannot be answered in words: use the buttons on the message "
    "(Approve, Reject, Edit & approve)."
)

answering_from_slack: ContextVar[bool] = ContextVar("answering_from_slack", default=False)
"""True while the bot itself resumes: its resume hook then leaves the message to this module."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answerer:
    """The Slack user answering, their workspace and tenant, and where to tell them things."""

    user: str
    team: str | None
    tenant_id: str
    audience: Audience


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyPlace:
    """The thread a reply was written in."""

    channel: str
    thread_ts: str


class Answering:
    def __init__(
        self,
        *,
        app: App,
        gateway: SlackGateway,
        authorizer: Authorizer,
        feedback: Feedback,
        conversations: Conversations,
    ) -> None:
        self._app = app
        self._gateway = gateway
        self._authorizer = authorizer
        self._feedback = feedback
        self._conversations = conversations

    async def waiting_pause(self, pause_id: str, who: Answerer) -> PauseView | None:
        """The pause if it waits and ``who`` may answer it; else they are told why (``None``)."""
        pause = await self._app.find_pause(pause_id, tenant_id=who.tenant_id)
        if pause is None:
            await self._feedback.tell(who.audience, NO_LONGER_AVAILABLE)
            return None
        if pause.status is not PauseStatus.PENDING:
            await self._tell_closed(pause, who)
            return None
        refusal = await self._authorizer.check(pause, user=who.user, team=who.team)
        if refusal is not None:
            await self._feedback.tell(who.audience, refusal.text)
            return None
        return pause

    async def decide(
        self, pause_id: str, who: Answerer, decision: ToolCallApprovalDecision
    ) -> None:
        """Check, then resume with ``decision`` (a click or a modal submission)."""
        pause = await self.waiting_pause(pause_id, who)
        if pause is None:
            return
        try:
            result = await self._resume(pause, who, decision=decision)
        except DtoValidationError as error:
            await self._feedback.tell(
                who.audience, f"That answer could not be used: {escape(error.message, 500)}"
            )
            return
        except _Refused:
            return
        except CountersignError as error:
            await self._after_failure(pause, who, error)
            return
        await self._after_answer(pause, who, result)

    async def reply(self, pause_id: str, who: Answerer, text: str, place: ReplyPlace) -> None:
        """Check, then resume with a free-text ``text`` read by the role's interpreter."""
        pause = await self.waiting_pause(pause_id, who)
        if pause is None:
            return
        try:
            result = await self._resume(pause, who, reply=text)
        except UninterpretableReplyError as error:
            await self._gateway.say_in_thread(
                place.channel, place.thread_ts, _not_understood(text, error.reason)
            )
            return
        except ReplyInterpreterMissingError:
            await self._gateway.say_in_thread(place.channel, place.thread_ts, USE_THE_BUTTONS)
            return
        except (DtoValidationError, _Refused):
            return
        except CountersignError as error:
            await self._after_failure(pause, who, error)
            return
        await self._after_answer(pause, who, result, reply=(text, place))

    # ---------------------------------------------------------------- internals

    async def _resume(
        self,
        pause: PauseView,
        who: Answerer,
        *,
        decision: ToolCallApprovalDecision | None = None,
        reply: str | None = None,
    ) -> ExecutionResult:
        channel = pause.answered_by is PauseAnswerer.CHANNEL
        try:
            with _answering():
                return await self._app.resume(
                    pause.pause_id,
                    tenant_id=who.tenant_id,
                    decision=decision,
                    reply=reply,
                    answered_by=who.user if channel else None,
                    owner_id=None if channel else who.user,
                )
        except UnknownPauseError:
            await self._feedback.tell(who.audience, NO_LONGER_AVAILABLE)
            raise _Refused() from None
        except NotPausedError:
            current = await self._app.find_pause(pause.pause_id, tenant_id=who.tenant_id)
            await self._tell_closed(current or pause, who)
            raise _Refused() from None
        except (ThreadOwnerError, PauseAnswererError):
            await self._feedback.tell(who.audience, NOT_THE_OWNER)
            raise _Refused() from None

    async def _after_answer(
        self,
        pause: PauseView,
        who: Answerer,
        result: ExecutionResult,
        *,
        reply: tuple[str, ReplyPlace] | None = None,
    ) -> None:
        """Update the message; say how a reply was read; say the run's end in its thread."""
        read_as = reply[0] if reply is not None else None
        answered = await self._gateway.show_outcome(
            pause.pause_id, tenant_id=who.tenant_id, read_as=read_as
        )
        if reply is not None:
            text, place = reply
            answered = answered or await self._app.find_pause(
                pause.pause_id, tenant_id=who.tenant_id
            )
            outcome = outcome_of(answered or pause, read_as=text)
            if outcome is not None:
                said = f'Read "{quote(text)}" as {verdict(outcome)}.'
                await self._gateway.say_in_thread(place.channel, place.thread_ts, said)
        await self._conversations.report(result)

    async def _after_failure(
        self, pause: PauseView, who: Answerer, error: CountersignError
    ) -> None:
        """An error out of ``resume``: before the answer was recorded, or after (the run failed)."""
        current = await self._app.find_pause(pause.pause_id, tenant_id=who.tenant_id)
        if current is not None and current.status is PauseStatus.PENDING:
            text = f"That answer could not be used: {escape(error.message, 500)}"
            await self._feedback.tell(who.audience, text)
            return
        await self._gateway.show_outcome(pause.pause_id, tenant_id=who.tenant_id)
        await self._conversations.report_failure(pause.thread_id, error)

    async def _tell_closed(self, pause: PauseView, who: Answerer) -> None:
        """Tell who answered (or that it is no longer needed); bring the message up to date."""
        if pause.status is PauseStatus.CANCELLED or pause.resolution in (
            PauseResolution.WITHDRAWN,
            PauseResolution.CANCELLED,
        ):
            await self._feedback.tell(who.audience, NO_LONGER_NEEDED)
        else:
            await self._feedback.tell(who.audience, already_answered(pause.responder))
        await self._gateway.show_outcome(pause.pause_id, tenant_id=who.tenant_id)


class _Refused(Exception):
    """The runtime refused the answer and the user was told; nothing else to do."""


@contextmanager
def _answering() -> Iterator[None]:
    token = answering_from_slack.set(True)
    try:
        yield
    finally:
        answering_from_slack.reset(token)


def _not_understood(reply: str, reason: str) -> str:
    """Which reply, why not (the interpreter's reason, its own hint left out), what would do."""
    why = reason.strip().removesuffix(HOW_TO_ANSWER).strip()
    said = f'I could not read "{quote(reply)}" as an answer.'
    if why:
        said += f" {escape(why, 500)}"
    return f"{said}\n{HOW_TO_REPLY}"
