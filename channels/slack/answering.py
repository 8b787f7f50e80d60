"""Answering a pause from Slack: one call into the runtime before the ack, the rest after.

Clicks, modal submissions and thread replies all end here. Before the ack, ``App.answer``
records the answer (or keeps a reply a model will read) with Slack's own rule of who may answer
(approvers, user groups); what it returns says what to do after the ack: move the run on, read
the kept reply, or tell the person why their answer was not taken (ephemerally; nothing was
recorded). The approval message and the requester's thread are updated from the App's resume
event (``SlackBot``), the one path every way of answering takes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, assert_never

from bot.app import App
from bot.core.answers import (
    AlreadyClosed,
    Answered,
    AnswerOutcome,
    ApprovalCounted,
    NotUnderstood,
    Refused,
    ReplyKept,
)
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import PauseAnswerer, PauseResolution, PauseStatus
from bot.core.errors import (
    CountersignError,
    DtoValidationError,
    NotPausedError,
    PauseAnswererError,
    ProposalChangedError,
    ReplyInterpreterMissingError,
    ThreadOwnerError,
    UnknownPauseError,
)
from bot.core.results import PauseView
from bot.runtime.handovers import PersonCheck
from bot.runtime.observed_answers import observe_answer
from bot.store.interruptions import is_interruption
from channels.kit.outcomes import outcome_of, verdict
from channels.kit.said import closed_sentence, refusal_text, said_of
from channels.kit.texts import (
    NO_LONGER_AVAILABLE,
    NO_LONGER_NEEDED,
    NO_WORDS_TAKEN,
    PROPOSAL_MAY_HAVE_CHANGED,
)
from channels.slack.approvals import show_approvals
from channels.slack.authorization import Authorizer
from channels.slack.button_values import Shown, read_answer_value
from channels.slack.feedback import Audience, Feedback, already_answered
from channels.slack.gateway import SlackGateway, quote
from channels.slack.read_lines import HeldLine, ReadLines
from channels.slack.redaction import log
from channels.slack.render import escape
from channels.slack.tasks import AckFirst
from interpreters.keyword import (
    APPROVALS_UNDERSTOOD,
    REJECTION_WITH_REASON,
    REJECTIONS_UNDERSTOOD,
    how_to_answer,
    reply_help,
)

HOW_TO_REPLY: Final = (
    "I understand these replies:\n"
    f"• to approve: {', '.join(APPROVALS_UNDERSTOOD[:-1])} or {APPROVALS_UNDERSTOOD[-1]}\n"
    f"• to reject: {', '.join(REJECTIONS_UNDERSTOOD[:-1])} or {REJECTIONS_UNDERSTOOD[-1]}, "
    f"with your reason after a colon, like {REJECTION_WITH_REASON}\n"
    "Or use the buttons on the message."
)
"""What a thread reply that was not understood is told: the words understood, in plain words."""
USE_THE_BUTTONS: Final = NO_WORDS_TAKEN

AfterAck = Callable[[], Coroutine[Any, Any, None]]
"""What an answer still needs once Slack has its acknowledgement."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answerer:
    """The Slack user answering, their workspace and tenant, and where to tell them things."""

    user: str
    team: str | None
    tenant_id: str
    audience: Audience


async def nothing() -> None:
    """Nothing left to do after the ack."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModalAnswer:
    """A modal's answer, before its ack: ``errors`` (by the decision's field, as
    ``DtoValidationError.field_errors`` names them) keep the modal open, nothing recorded;
    else ``after`` is what follows the ack."""

    errors: dict[str, str] = field(default_factory=dict)
    after: AfterAck = nothing


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyPlace:
    """The thread a reply was written in."""

    channel: str
    thread_ts: str
    ts: str | None = None
    """The reply's own message (its line is owed under it)."""


class Answering:
    def __init__(
        self,
        *,
        app: App,
        gateway: SlackGateway,
        authorizer: Authorizer,
        feedback: Feedback,
        gate: AckFirst | None = None,
    ) -> None:
        self._app = app
        self._gateway = gateway
        self._authorizer = authorizer
        self._feedback = feedback
        self._gate = gate
        self._lines = ReadLines(app=app, outbox=gateway.outbox)

    async def waiting_pause(self, pause_id: str, who: Answerer) -> PauseView | None:
        """The pause if it waits and ``who`` may answer it; else they are told why (``None``).
        For opening a modal (Reject, Edit & approve): nothing is answered yet."""
        pause = await self._app.find_pause(pause_id, tenant_id=who.tenant_id)
        if pause is None:
            self._observe(Refused(pause=None, error=UnknownPauseError()), who)
            await self._feedback.tell(who.audience, NO_LONGER_AVAILABLE)
            return None
        if pause.status is not PauseStatus.PENDING:
            self._observe(AlreadyClosed(pause=pause, error=NotPausedError("it is closed")), who)
            await self._tell_closed(pause, who)
            return None
        refusal = await self._authorizer.check(pause, user=who.user, team=who.team)
        if refusal is not None and not await self._app.may_answer_as_delegate(
            pause, who.user, may_answer_as=self.person_rule(who)
        ):
            self._observe(Refused(pause=pause, error=refused_as(pause, refusal.text)), who)
            await self._feedback.tell(who.audience, refusal.text)
            return None
        return pause

    async def refusal(self, pause: PauseView, who: Answerer) -> str | None:
        """Why ``who`` may not answer ``pause`` (``None``: they may): Slack's rule, unless the
        question was handed to them (reassigned, or a standing delegation)."""
        refusal = await self._authorizer.check(pause, user=who.user, team=who.team)
        if refusal is None or await self._app.may_answer_as_delegate(
            pause, who.user, may_answer_as=self.person_rule(who)
        ):
            return None
        return refusal.text

    def person_rule(self, who: Answerer) -> PersonCheck:
        """Slack's rule of who may answer, for any person of ``who``'s workspace (a standing
        delegation is applied by it: the delegate may answer what the delegator may)."""

        async def may_answer_as(pause: PauseView, person: str) -> str | None:
            refusal = await self._authorizer.check(pause, user=person, team=who.team)
            return None if refusal is None else refusal.text

        return may_answer_as

    def _observe(self, outcome: AnswerOutcome, who: Answerer) -> None:
        """A click refused before its modal opened is an answer refused like any other:
        counted and logged as ``App.answer`` does with its outcomes."""
        observe_answer(self._app.metrics, outcome, tenant_id=who.tenant_id, by=who.user)

    async def record_decision(
        self, shown: Shown, who: Answerer, decision: ToolCallApprovalDecision
    ) -> AfterAck:
        """Before the ack: check who answers and record ``decision`` (phase 1), so a click that
        Slack saw acknowledged is never lost. Returns what to do after the ack: continue the run,
        or tell the user why their answer was not taken. ``shown``: the question and the
        proposal the clicked surface showed (an approval of one replaced since is refused)."""
        outcome = await self._outcome(shown.pause_id, who, decision=decision, shown=shown)
        return self._after(outcome, who, None, shown=shown)

    async def record_from_modal(
        self, shown: Shown, who: Answerer, decision: ToolCallApprovalDecision
    ) -> ModalAnswer:
        """As ``record_decision``, for a modal's submission: a decision refused for what a
        field holds (a reason its role requires, an edited value) comes back as that field's
        error for the modal, which stays open; nothing was recorded."""
        outcome = await self._outcome(shown.pause_id, who, decision=decision, shown=shown)
        if (
            isinstance(outcome, Refused)
            and isinstance(outcome.error, DtoValidationError)
            and outcome.error.field_errors
        ):
            return ModalAnswer(errors=outcome.error.field_errors)
        return ModalAnswer(after=self._after(outcome, who, None, shown=shown))

    async def record_reply(
        self, pause_id: str, who: Answerer, text: str, place: ReplyPlace
    ) -> AfterAck:
        """Before the ack: read ``text`` with the role's interpreter and record the answer; a
        reply a model reads is kept instead, and read after the ack. How it was read is owed
        first (``channels.slack.read_lines``): said once the answer is recorded, also when
        this process dies before saying it."""
        line = await self._lines.hold(
            pause_id,
            tenant_id=who.tenant_id,
            by=who.user,
            reply=text,
            channel=place.channel,
            thread_ts=place.thread_ts,
            reply_ts=place.ts,
        )
        outcome = await self._outcome(pause_id, who, reply=(text, place))
        if not isinstance(outcome, Answered | ReplyKept):
            await self._lines.drop(line)
        return self._after(outcome, who, (text, place), line)

    async def record_batch(
        self, values: list[str], who: Answerer, decision: ToolCallApprovalDecision
    ) -> list[AnswerOutcome]:
        """Before the ack: ``decision`` for each question ``values`` name (what a batch sealed:
        each pause id with the proposal shown, ``channels.slack.button_values``), through
        ``App.answer_all``, each with Slack's rule of who may answer and checked against the
        proposal shown, as a click on its own buttons; recorded only (phase 1): the runs move
        after the ack (``after_batch``), as a single click's."""
        shown = [read_answer_value(value) for value in values]
        return await self._app.answer_all(
            [s.pause_id for s in shown],
            shown_rounds={s.pause_id: s.checked_round for s in shown},
            tenant_id=who.tenant_id,
            by=who.user,
            decision=decision,
            may_answer=self._authorizer.rule_for(user=who.user, team=who.team),
            may_answer_as=self.person_rule(who),
            continue_run=False,
            open_tree=self._opens_trees(),
        )

    async def after_batch(self, outcomes: Sequence[AnswerOutcome]) -> None:
        """After a batch's ack: move each run with an answer once (its messages are updated
        from the resume event, as for a click), and show the approvals counted on the
        questions that need more."""
        await self._app.continue_answers(outcomes)  # each run once; one failing leaves the rest
        for outcome in outcomes:
            if isinstance(outcome, ApprovalCounted):
                await show_approvals(self._app, self._gateway, outcome.pause)

    def after(self, outcome: AnswerOutcome, who: Answerer) -> AfterAck:
        """What follows the ack of an answer recorded elsewhere (a grant's approval,
        ``channels.slack.grant_flows``): as for a click."""
        return self._after(outcome, who, None)

    # ---------------------------------------------------------------- internals

    async def _outcome(
        self,
        pause_id: str,
        who: Answerer,
        *,
        decision: ToolCallApprovalDecision | None = None,
        reply: tuple[str, ReplyPlace] | None = None,
        shown: Shown | None = None,
    ) -> AnswerOutcome:
        """``shown``: what the surface answered from showed (None: a thread reply, which
        answers the proposal as it stands)."""
        return await self._app.answer(
            pause_id,
            tenant_id=who.tenant_id,
            by=who.user,
            decision=decision,
            reply=None if reply is None else reply[0],
            may_answer=self._authorizer.rule_for(user=who.user, team=who.team),
            continue_run=False,
            keep_model_replies=True,
            may_answer_as=self.person_rule(who),
            shown_round=None if shown is None else shown.checked_round,
            open_tree=self._opens_trees(),
        )

    def _opens_trees(self) -> bool:
        """Whether an answer's write also opens its run (one write less per click): not in a
        burst of requests, whose acks it would hold back (a longer write before each 200,
        SQLite's writes one at a time): the run's continuation opens it after the acks."""
        return self._gate is None or not self._gate.crowded

    def _after(
        self,
        outcome: AnswerOutcome,
        who: Answerer,
        reply: tuple[str, ReplyPlace] | None,
        line: HeldLine | None = None,
        *,
        shown: Shown | None = None,
    ) -> AfterAck:
        """What to do after the ack about ``outcome`` (``line``: a reply's, owed; ``shown``:
        what the surface answered from showed)."""
        match outcome:
            case Answered():
                return functools.partial(self._continue, outcome, reply, line)
            case ApprovalCounted(pause=pause):
                told = self._telling(who, said_of(outcome))
                return functools.partial(self._counted, told, pause)
            case ReplyKept():
                assert reply is not None  # only replies are kept
                return functools.partial(self._read_then_continue, outcome, who, reply, line)
            case NotUnderstood(reply=text, reason=reason, error=error, language=language):
                if reply is None:  # pragma: no cover - only replies go unread
                    return self._telling(who, escape(reason, 500))
                said = (
                    USE_THE_BUTTONS
                    if isinstance(error, ReplyInterpreterMissingError)
                    else _not_understood(text, reason, language)
                )
                return functools.partial(
                    self._gateway.say_in_thread,
                    *_at(reply[1]),
                    said,
                    pause_id=outcome.pause.pause_id,
                    tenant_id=outcome.pause.tenant_id,
                    moot_when_closed=True,  # how to answer a question that closed: not said
                )
            case AlreadyClosed(pause=pause):
                return functools.partial(self._tell_closed, pause, who)
            case Refused(error=ProposalChangedError()) if shown is not None and shown.round is None:
                return self._telling(who, PROPOSAL_MAY_HAVE_CHANGED)  # an old message's click
            case Refused(error=error):
                return self._telling(who, _refusal(error))
            case _:
                assert_never(outcome)

    async def _counted(self, told: AfterAck, pause: PauseView) -> None:
        """After the ack: tell the approver their approval counts, and show the others."""
        await told()
        await show_approvals(self._app, self._gateway, pause)

    def _telling(self, who: Answerer, text: str) -> AfterAck:
        return functools.partial(self._feedback.tell, who.audience, text)

    async def _continue(
        self,
        answered: Answered,
        reply: tuple[str, ReplyPlace] | None,
        line: HeldLine | None = None,
    ) -> None:
        """After the ack: say how a reply was read (it is recorded), then move the run on
        (phase 2). The message and the run's end are told from the resume event, also when the
        run failed."""
        if line is not None:
            await self._lines.say(line, answered.pause)
        elif reply is not None:
            text, place = reply
            outcome = outcome_of(answered.pause, read_as=text)
            if outcome is not None:
                said = f'Read "{quote(text)}" as {verdict(outcome)}.'
                await self._gateway.say_in_thread(place.channel, place.thread_ts, said)
        try:
            await self._app.continue_answer(answered)
        except CountersignError:
            return  # the run failed after the answer was recorded: its resume event told it
        except Exception as error:  # the database went away: recorded, recovery moves it on
            if not is_interruption(error):
                raise
            log.warning("slack: an answer's run waits for recovery: %s", type(error).__name__)

    async def _read_then_continue(
        self,
        kept: ReplyKept,
        who: Answerer,
        reply: tuple[str, ReplyPlace],
        line: HeldLine | None = None,
    ) -> None:
        """After the ack: read a kept reply, then go on as with any recorded answer."""
        outcome = await self._app.read_kept(kept.received, continue_run=False)
        if line is not None and not isinstance(outcome, Answered):
            await self._lines.drop(line)
        await self._after(outcome, who, reply, line)()

    async def _tell_closed(self, pause: PauseView, who: Answerer) -> None:
        """Tell who answered (or that it is no longer needed); bring the message up to date."""
        if pause.resolution is PauseResolution.EXPIRED:
            await self._feedback.tell(who.audience, closed_sentence(pause))  # the kit's words
        elif pause.status is PauseStatus.CANCELLED or pause.resolution in (
            PauseResolution.WITHDRAWN,
            PauseResolution.CANCELLED,
        ):
            await self._feedback.tell(who.audience, NO_LONGER_NEEDED)
        else:
            await self._feedback.tell(who.audience, already_answered(pause.responder))
        await self._gateway.show_outcome(pause)


def refused_as(pause: PauseView, words: str) -> CountersignError:
    """Slack's refusal of who may answer, as the runtime's error of it: not the thread's
    owner (a THREAD_OWNER pause), or not one of its approvers."""
    if pause.answered_by is PauseAnswerer.THREAD_OWNER:
        return ThreadOwnerError(words)
    return PauseAnswererError(words)


def _refusal(error: CountersignError) -> str:
    """What a person is told about an answer the runtime refused (nothing was recorded): the
    kit's sentence (``channels.kit.said``), escaped for mrkdwn."""
    return escape(refusal_text(error), 600)


def _at(place: ReplyPlace) -> tuple[str, str]:
    return (place.channel, place.thread_ts)


def _not_understood(reply: str, reason: str, language: str | None = None) -> str:
    """Which reply, why not (the interpreter's reason, its own hint left out), what would do:
    in the language the reply was read in, when the interpreter recognised one."""
    why = reason.strip().removesuffix(how_to_answer(language)).strip()
    said = f'I could not read "{quote(reply)}" as an answer.'
    if why:
        said += f" {escape(why, 500)}"
    return f"{said}\n{HOW_TO_REPLY if language is None else reply_help(language)}"
