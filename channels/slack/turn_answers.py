"""A turn message's "Approve all" and "Reject all…": every item still waiting that it showed,
approved at once, or rejected with the one reason its modal asks (the batch reject modal of
``channels.slack.batch_flows``, submitted and recorded as "Reject selected…"'s).

Each item goes the one answer path and settles its own pause (its own record, audit entry and
outcome): all are recorded before the ack (phase 1, as a single Approve click), the runs move
after it, each once with all of its answers (``App.continue_answer``). An item answered
elsewhere meanwhile is skipped, not an error for the rest; a retried or double-clicked
"Approve all" finds each item answered and approves nothing twice. The message itself is
updated from the App's resume events, as for any answer (``channels.slack.turn_messages``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

from bot.app import App
from bot.core.answers import AlreadyClosed, AnswerOutcome
from bot.core.dtos import ToolCallApprovalDecision
from channels.slack.answering import AfterAck, Answerer, Answering
from channels.slack.batch_flows import BatchFlows
from channels.slack.batches import batch_reply
from channels.slack.feedback import Feedback
from channels.slack.gateway import SlackGateway
from channels.slack.redaction import log

NOT_THIS_MESSAGE: Final = (
    "This button could not be verified: nothing was answered. "
    "Use the buttons of each request on the message."
)


class TurnAnswers:
    def __init__(
        self,
        *,
        app: App,
        gateway: SlackGateway,
        answering: Answering,
        feedback: Feedback,
        batches: BatchFlows,
    ) -> None:
        self._app = app
        self._gateway = gateway
        self._answering = answering
        self._feedback = feedback
        self._batches = batches

    async def record_approve_all(
        self, value: str, who: Answerer, *, channel_id: str, ts: str
    ) -> AfterAck:
        """Before the ack: approve each item the button of message ``ts`` in ``channel_id``
        showed (its sealed value); what follows the ack is returned."""
        pause_ids = self._gateway.turns.open_approve_all(
            value, channel_id=channel_id, ts=ts, tenant_id=who.tenant_id
        )
        if pause_ids is None:
            log.warning("slack: refused an Approve all whose value does not open for its message")
            return functools.partial(self._feedback.tell, who.audience, NOT_THIS_MESSAGE)
        outcomes = await self._answering.record_batch(
            pause_ids, who, ToolCallApprovalDecision(approved=True)
        )
        return functools.partial(self._after, outcomes, who)

    async def open_reject_all(
        self, value: str, who: Answerer, *, channel_id: str, ts: str, trigger_id: str
    ) -> None:
        """A "Reject all…" click on message ``ts`` in ``channel_id``: the batch reject modal
        over the items its sealed value showed (sealed again for ``who``); nothing is answered
        until it is submitted, each item then rejected with its one reason."""
        values = self._gateway.turns.open_approve_all(
            value, channel_id=channel_id, ts=ts, tenant_id=who.tenant_id
        )
        if values is None:
            log.warning("slack: refused a Reject all whose value does not open for its message")
            await self._feedback.tell(who.audience, NOT_THIS_MESSAGE)
            return
        await self._batches.open_reject_of(values, who, trigger_id)

    async def _after(self, outcomes: Sequence[AnswerOutcome], who: Answerer) -> None:
        """After the ack: tell the person what became of each item, then move each run once
        (with all of its answers) and show what is left to show."""
        await self._feedback.tell(who.audience, batch_reply(self._gateway, outcomes, who.user))
        await self._answering.after_batch(outcomes)
        for outcome in outcomes:
            if isinstance(outcome, AlreadyClosed) and outcome.pause is not None:
                await self._gateway.show_outcome(outcome.pause)
