"""Answering a pause from Slack: check, resume, then show the outcome where it was asked.

Clicks, modal submissions and thread replies all end here, after their ack. A refusal or a
pause that no longer waits is told to the user alone; nothing is resumed. An answer the
runtime took updates the approval message (buttons removed) and, when the run ended, its thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from bot.app import App
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import PauseAnswerer, PauseResolution, PauseStatus
from bot.core.errors import (
    CountersignError,
    NotPausedError,
    PauseAnswererError,
    ReplyInterpreterMissingError,
    SelfApprovalError,
    ThreadOwnerError,
    UninterpretableReplyError,
    UnknownPauseError,
)
from bot.core.results import ExecutionResult, PauseView, ReceivedReply, RecordedAnswer
from channels.slack.authorization import Authorizer
from channels.slack.catalog import Catalog
from channels.slack.conversations import Conversations
from channels.slack.feedback import (
    NO_LONGER_AVAILABLE,
    NO_LONGER_NEEDED,
    NOT_THE_OWNER,
    Audience,
    Feedback,
    already_answered,
)
from channels.slack.gateway import SlackGateway, quote
from channels.slack.outcomes import outcome_of, verdict
from channels.slack.render import escape
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

SELF_APPROVAL: Final = (
    "You asked for this, so you cannot approve it: someone else must answer "
    "(this approval separates duties)."
)

AfterAck = Callable[[], Coroutine[Any, Any, None]]
"""What an answer still needs once Slack has its acknowledgement."""

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
        catalog: Catalog,
        authorizer: Authorizer,
        feedback: Feedback,
        conversations: Conversations,
    ) -> None:
        self._app = app
        self._gateway = gateway
        self._catalog = catalog
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
        """Check, record and continue ``decision`` (a click or a modal submission) at once."""
        after = await self.record_decision(pause_id, who, decision)
        await after()

    async def reply(self, pause_id: str, who: Answerer, text: str, place: ReplyPlace) -> None:
        """Check, read, record and continue a free-text ``text`` at once."""
        after = await self.record_reply(pause_id, who, text, place)
        await after()

    async def record_decision(
        self, pause_id: str, who: Answerer, decision: ToolCallApprovalDecision
    ) -> AfterAck:
        """Before the ack: check who answers and record ``decision`` (phase 1), so a click that
        Slack saw acknowledged is never lost. Returns what to do after the ack: continue the run
        and show the outcome, or tell the user why their answer was not taken."""
        return await self._record(pause_id, who, decision=decision)

    async def record_reply(
        self, pause_id: str, who: Answerer, text: str, place: ReplyPlace
    ) -> AfterAck:
        """Before the ack: read ``text`` with the role's interpreter and record the answer."""
        return await self._record(pause_id, who, reply=(text, place))

    # ---------------------------------------------------------------- internals

    async def _record(
        self,
        pause_id: str,
        who: Answerer,
        *,
        decision: ToolCallApprovalDecision | None = None,
        reply: tuple[str, ReplyPlace] | None = None,
    ) -> AfterAck:
        pause = await self._app.find_pause(pause_id, tenant_id=who.tenant_id)
        if pause is None:
            return self._telling(who, NO_LONGER_AVAILABLE)
        if pause.status is not PauseStatus.PENDING:
            return functools.partial(self._tell_closed, pause, who)
        refusal = await self._authorizer.check(pause, user=who.user, team=who.team)
        if refusal is not None:
            return self._telling(who, refusal.text)
        channel = pause.answered_by is PauseAnswerer.CHANNEL
        if reply is not None and self._catalog.role_reads_replies_with_a_model(pause.role):
            try:  # kept before the ack, read after it: a model may take longer than Slack waits
                received = await self._app.receive_reply(
                    pause.pause_id,
                    tenant_id=who.tenant_id,
                    reply=reply[0],
                    answered_by=who.user if channel else None,
                    owner_id=None if channel else who.user,
                )
            except CountersignError as error:
                return self._refused(pause, who, error, reply)
            return functools.partial(self._read_then_continue, pause, who, received, reply)
        try:
            recorded = await self._app.record_answer(
                pause.pause_id,
                tenant_id=who.tenant_id,
                decision=decision,
                reply=None if reply is None else reply[0],
                answered_by=who.user if channel else None,
                owner_id=None if channel else who.user,
            )
        except CountersignError as error:
            return self._refused(pause, who, error, reply)
        return functools.partial(self._continue, pause, who, recorded, reply)

    def _refused(
        self,
        pause: PauseView,
        who: Answerer,
        error: CountersignError,
        reply: tuple[str, ReplyPlace] | None,
    ) -> AfterAck:
        """What to tell after the ack about an answer the runtime refused (nothing recorded)."""
        match error:
            case UnknownPauseError():
                return self._telling(who, NO_LONGER_AVAILABLE)
            case NotPausedError():
                return functools.partial(self._tell_closed_now, pause, who)
            case SelfApprovalError():
                return self._telling(who, SELF_APPROVAL)
            case ThreadOwnerError() | PauseAnswererError():
                return self._telling(who, NOT_THE_OWNER)
            case UninterpretableReplyError() if reply is not None:
                said = _not_understood(reply[0], error.reason)
                return functools.partial(self._gateway.say_in_thread, *_at(reply[1]), said)
            case ReplyInterpreterMissingError() if reply is not None:
                return functools.partial(
                    self._gateway.say_in_thread, *_at(reply[1]), USE_THE_BUTTONS
                )
            case _:
                return self._telling(
                    who, f"That answer could not be used: {escape(error.message, 500)}"
                )

    def _telling(self, who: Answerer, text: str) -> AfterAck:
        return functools.partial(self._feedback.tell, who.audience, text)

    async def _continue(
        self,
        pause: PauseView,
        who: Answerer,
        recorded: RecordedAnswer,
        reply: tuple[str, ReplyPlace] | None,
    ) -> None:
        """After the ack: move the run on (phase 2) and show the outcome where it was asked."""
        try:
            with _answering():
                result = await self._app.continue_answer(recorded)
        except CountersignError as error:
            await self._after_failure(pause, who, error)
            return
        await self._after_answer(pause, who, result, reply=reply)

    async def _read_then_continue(
        self,
        pause: PauseView,
        who: Answerer,
        received: ReceivedReply,
        reply: tuple[str, ReplyPlace],
    ) -> None:
        """After the ack: read a kept reply, then go on as with any recorded answer."""
        try:
            recorded = await self._app.read_reply(received)
        except CountersignError as error:
            await self._refused(pause, who, error, reply)()
            return
        await self._continue(pause, who, recorded, reply)

    async def _tell_closed_now(self, pause: PauseView, who: Answerer) -> None:
        current = await self._app.find_pause(pause.pause_id, tenant_id=who.tenant_id)
        await self._tell_closed(current or pause, who)

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


@contextmanager
def _answering() -> Iterator[None]:
    token = answering_from_slack.set(True)
    try:
        yield
    finally:
        answering_from_slack.reset(token)


def _at(place: ReplyPlace) -> tuple[str, str]:
    return (place.channel, place.thread_ts)


def _not_understood(reply: str, reason: str) -> str:
    """Which reply, why not (the interpreter's reason, its own hint left out), what would do."""
    why = reason.strip().removesuffix(HOW_TO_ANSWER).strip()
    said = f'I could not read "{quote(reply)}" as an answer.'
    if why:
        said += f" {escape(why, 500)}"
    return f"{said}\n{HOW_TO_REPLY}"
