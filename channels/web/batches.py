"""Answering the inbox's selection: the picked questions settled together through
``App.answer_all``, each by the web's rule of who may answer (the one a single answer is
asked: ``channels.web.answering``), and one line per question for the page.

A pick is the question's own link token: one that does not open as a question link of the
signed-in person (another person's, another tenant's, forged, or a bare pause id) refuses the
whole post before anything is answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.app import App
from bot.core.answers import AnswerOutcome
from bot.core.results import PauseView
from channels.kit.batches import BatchAction, BatchLine, batch_lines
from channels.kit.question import question_view
from channels.kit.texts import BATCH_NONE_SELECTED, BATCH_NOT_YOURS, NO_LONGER_AVAILABLE
from channels.web.answering import WebAnswering
from channels.web.catalog import WebCatalog
from channels.web.links import Link, LinkError, LinkKind, LinkSigner
from channels.web.notify import log
from channels.web.offers import not_offered
from channels.web.render import ACTION_FIELD
from channels.web.render_batches import PICK_PREFIX, REASON_FIELD, read_pick


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchSaid:
    """What the page says of a batch: a line per question, or why nothing was answered."""

    status: int
    lines: list[BatchLine] = field(default_factory=list)
    notice: str = ""


class WebBatches:
    def __init__(
        self, app: App, catalog: WebCatalog, answering: WebAnswering, signer: LinkSigner
    ) -> None:
        self._app = app
        self._catalog = catalog
        self._answering = answering
        self._signer = signer

    async def answer(self, session: Link, fields: Mapping[str, str]) -> BatchSaid:
        """Approve or reject (``fields``' action, one reason for all) the picked questions as
        the signed-in person."""
        action = fields.get(ACTION_FIELD, "")
        if action not in ("approve", "reject"):
            return BatchSaid(status=422, notice=BATCH_NONE_SELECTED)
        batch_action: BatchAction = "approve" if action == "approve" else "reject"
        picks = [v for k, v in fields.items() if k.startswith(PICK_PREFIX)]  # as posted
        if not picks:
            return BatchSaid(status=422, notice=BATCH_NONE_SELECTED)
        pause_ids: list[str] = []
        rounds: dict[str, int] = {}
        for pick in picks:
            token, shown = read_pick(pick)
            try:
                link = self._signer.open(LinkKind.QUESTION, token)
            except LinkError as error:
                log.warning("web: refused a batch with a pick that opens nothing: %s", error)
                return BatchSaid(status=403, notice=BATCH_NOT_YOURS)
            if link.approver != session.approver or link.tenant_id != session.tenant_id:
                log.warning("web: refused a batch with another person's question")
                return BatchSaid(status=403, notice=BATCH_NOT_YOURS)
            pause_ids.append(link.pause_id)
            rounds[link.pause_id] = 0 if shown is None else shown  # as the page's forms check

        async def may_answer(pause: PauseView) -> str | None:
            refusal = self._catalog.refusal(pause, session.approver)
            if refusal is not None:
                return refusal
            offers = self._catalog.offers(pause)
            return None if offers.allows(batch_action) else not_offered(offers)

        reason = fields.get(REASON_FIELD, "").strip()
        decision: dict[str, object] = {"approved": batch_action == "approve"}
        if batch_action == "reject" and reason:
            decision["reason"] = reason
        outcomes = await self._app.answer_all(
            list(dict.fromkeys(pause_ids)),
            tenant_id=session.tenant_id,
            by=session.approver,
            decision=decision,
            may_answer=may_answer,
            may_answer_as=self._answering.person_rule,
            shown_rounds=rounds,
        )
        now = self._app.clock.now()

        def title(outcome: AnswerOutcome) -> str:
            pause = outcome.pause
            if pause is None:
                return NO_LONGER_AVAILABLE
            return question_view(pause, self._catalog, now=now).title

        def name(who: str) -> str:
            return "you" if who == session.approver else who

        return BatchSaid(
            status=200, lines=batch_lines(outcomes, batch_action, title=title, name=name)
        )
