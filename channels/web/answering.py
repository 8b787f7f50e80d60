"""Answering a question from its page: one call into the runtime, and what the page says then.

Approve, Reject, Edit & approve, Answer instead and a free-text answer all end in
``App.answer`` as the link's approver, with the web's rule asked after the role's own (its
owner, separation of duties): who may answer (its approvers, once escalated its
``escalate_to`` people too; a THREAD_OWNER question: its owner), and only in a way the page
offers (the asker's ``allowed_decisions``). Nothing here renders: ``Said`` is what the page
tells, and its HTTP status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

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
from bot.core.errors import (
    REASON_FIELD,
    CountersignError,
    DtoValidationError,
    ReplyInterpreterMissingError,
    UnknownPauseError,
)
from bot.core.results import PauseView
from bot.store.interruptions import is_interruption
from channels.kit.outcomes import outcome_of, words_of
from channels.kit.said import refusal_text
from channels.kit.texts import (
    NO_WORDS_TAKEN,
    SOME_VALUES,
    not_understood,
)
from channels.web.catalog import WebCatalog
from channels.web.links import Link
from channels.web.notify import log
from channels.web.offers import Action, not_offered


@dataclass(frozen=True, slots=True, kw_only=True)
class Said:
    """What became of an answer, for the page: ``status`` 303 means "taken: show the
    question as it now is"; else the page shows ``text`` with the forms (the question still
    waits) or without them (``closed``)."""

    status: int
    text: str = ""
    closed: bool = False
    field_error: str = ""  # a refused edit: shown on the edit form
    field_errors: dict[str, str] = field(default_factory=dict)
    """A refused edit's errors by argument key: each shown next to its input."""


class WebAnswering:
    def __init__(self, app: App, catalog: WebCatalog) -> None:
        self._app = app
        self._catalog = catalog

    async def answer(
        self,
        link: Link,
        action: Action,
        *,
        decision: ToolCallApprovalDecision | None = None,
        reply: str | None = None,
        shown_round: int | None = None,
    ) -> Said:
        """Answer as ``link``'s approver by ``action`` (a form of the page), refused unless the
        page offers it for the question as it now is."""

        async def may_answer(pause: PauseView) -> str | None:
            refusal = self._catalog.refusal(pause, link.approver)
            if refusal is not None:
                return refusal
            offers = self._catalog.offers(pause)
            return None if offers.allows(action) else not_offered(offers)

        outcome = await self._app.answer(
            link.pause_id,
            tenant_id=link.tenant_id,
            by=link.approver,
            decision=decision,
            reply=reply,
            may_answer=may_answer,
            continue_run=False,
            keep_model_replies=True,
            may_answer_as=self.person_rule,
            shown_round=shown_round,
        )
        return await self._said(outcome)

    async def said(self, outcome: AnswerOutcome) -> Said:
        """What the page says of ``outcome`` (an answer recorded elsewhere: a grant's)."""
        return await self._said(outcome)

    async def person_rule(self, pause: PauseView, person: str) -> str | None:
        """The web's rule of who may answer, for any person (a delegation is applied by it)."""
        return self._catalog.refusal(pause, person)

    async def refusal(self, pause: PauseView, approver: str) -> str | None:
        """Why ``approver`` may not answer ``pause`` here (``None``: they may): the web's
        rule, unless the question was handed to them (reassigned, or a delegation)."""
        refusal = self._catalog.refusal(pause, approver)
        if refusal is None:
            return None
        delegate = await self._app.may_answer_as_delegate(
            pause, approver, may_answer_as=self.person_rule
        )
        return None if delegate else refusal

    async def _said(self, outcome: AnswerOutcome) -> Said:
        match outcome:
            case Answered():
                try:
                    await self._app.continue_answer(outcome)
                except CountersignError as error:  # recorded; the run's failure is its own
                    log.warning("web: the run failed after an answer: %s", error.code)
                except Exception as error:  # recorded: the recovery sweep moves the run on
                    if not is_interruption(error):
                        raise
                    log.warning("web: the run waits for recovery after an answer: %s", error)
                return Said(status=303)
            case ApprovalCounted():  # the page shows who approved and how many more
                return Said(status=303)
            case ReplyKept(received=received):
                return await self._said(await self._app.read_kept(received, continue_run=False))
            case NotUnderstood(reason=reason, error=error):
                if isinstance(error, ReplyInterpreterMissingError):
                    text = NO_WORDS_TAKEN
                else:
                    text = not_understood(reason)
                return Said(status=422, text=text)
            case AlreadyClosed(pause=pause):
                return Said(status=409, text=closed_text(pause, None), closed=True)
            case Refused(error=error):
                return _refused(error)
            case _:
                assert_never(outcome)


def _refused(error: CountersignError) -> Said:
    """A refused answer: the kit's sentence (``channels.kit.said``) with the page's status; a
    refused decision said field by field (``_invalid``)."""
    match error:
        case UnknownPauseError():
            return Said(status=404, text=refusal_text(error), closed=True)
        case DtoValidationError():
            return _invalid(error)
        case _:
            return Said(status=403, text=refusal_text(error))


def _invalid(error: DtoValidationError) -> Said:
    """A refused decision, said as the runtime says it for a person: a rejection without the
    reason its role requires, an edit with an error per argument (next to each input)."""
    reason = error.field_errors.get(REASON_FIELD)
    if reason is not None:
        return Said(status=422, text=reason)
    by_argument = error.argument_errors()
    if by_argument:
        return Said(status=422, text=SOME_VALUES, field_errors=by_argument)
    return Said(status=422, text=error.message, field_error=error.message)


def closed_text(pause: PauseView, viewer: str | None) -> str:
    """What a question that no longer waits says about how it closed (the kit's words;
    ``viewer`` is named "you")."""
    outcome = outcome_of(pause)
    if outcome is None:
        return ""
    return words_of(outcome).sentence(lambda who: "you" if who == viewer else who)
