"""Several questions answered at once from a Slack list (``/pending``, the App Home): "Approve
all", "Approve selected" and "Reject selected…" (its modal's one reason, also the one a turn
message's "Reject all…" asks).

Each is what one listener does before its ack (record every item: ``Answering.record_batch``)
and after it (move the runs, then say one line per question where the person clicked). What
was picked arrives sealed for the person (``channels.slack.batch_seal``): a value that does not
open for them refuses the whole click, nothing answered.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answers import AnswerOutcome
from bot.core.dtos import ToolCallApprovalDecision
from channels.kit.batches import BatchAction
from channels.kit.texts import BATCH_NONE_SELECTED, BATCH_NOT_YOURS, BATCH_REASON_REQUIRED
from channels.slack.answering import AfterAck, Answerer, Answering, ModalAnswer
from channels.slack.batch_seal import BatchSealer
from channels.slack.batches import batch_reply
from channels.slack.feedback import Feedback
from channels.slack.flows import MAX_REASON, TAMPERED
from channels.slack.gateway import SlackGateway
from channels.slack.home import HomeTabs
from channels.slack.redaction import log
from channels.slack.render import truncate
from channels.slack.render_batch_items import batch_reject_modal
from channels.slack.render_edit import StateValues
from channels.slack.render_modal import REASON_BLOCK, reject_reason
from channels.slack.signing import MetadataSigner, ModalMetadata
from channels.slack.webapi import api_error


class BatchFlows:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        gateway: SlackGateway,
        answering: Answering,
        feedback: Feedback,
        home: HomeTabs,
        signer: MetadataSigner,
        sealer: BatchSealer,
        refresh_list: Callable[[Answerer], Awaitable[None]],
    ) -> None:
        self._client = client
        self._gateway = gateway
        self._answering = answering
        self._feedback = feedback
        self._home = home
        self._signer = signer
        self._sealer = sealer
        self._refresh_list = refresh_list

    async def record_all(self, value: str, who: Answerer) -> AfterAck:
        """An "Approve all" click, recorded before its ack (each question its own answer)."""
        pause_ids = self._sealer.open(value, user=who.user, tenant_id=who.tenant_id)
        if pause_ids is None:
            log.warning("slack: refused an Approve all whose value does not open")
            return functools.partial(self._feedback.tell, who.audience, BATCH_NOT_YOURS)
        return await self._record(pause_ids, who, ToolCallApprovalDecision(approved=True))

    async def record_selected(self, picked: Sequence[str], who: Answerer) -> AfterAck:
        """An "Approve selected" click, ``picked`` the ticked checkboxes' sealed values:
        recorded before its ack as "Approve all" is."""
        pause_ids = self._open_picks(picked, who)
        if isinstance(pause_ids, str):
            return functools.partial(self._feedback.tell, who.audience, pause_ids)
        return await self._record(pause_ids, who, ToolCallApprovalDecision(approved=True))

    async def open_reject(self, picked: Sequence[str], who: Answerer, trigger_id: str) -> None:
        """A "Reject selected…" click: the modal asking one reason for the ticked questions
        (sealed again, with where to tell the person, in its metadata); nothing is answered
        until it is submitted."""
        pause_ids = self._open_picks(picked, who)
        if isinstance(pause_ids, str):
            await self._feedback.tell(who.audience, pause_ids)
            return
        await self.open_reject_of(pause_ids, who, trigger_id)

    async def open_reject_of(self, pause_ids: list[str], who: Answerer, trigger_id: str) -> None:
        """The modal asking one reason for the questions ``pause_ids`` name (each with the
        proposal shown, as a batch seals them), already opened for ``who``: "Reject
        selected…"'s, and a turn message's "Reject all…" (``channels.slack.turn_answers``)."""
        metadata = self._signer.seal(
            ModalMetadata(
                kind="batch-reject",
                pause_id=self._sealer.seal(pause_ids, user=who.user, tenant_id=who.tenant_id),
                user=who.user,
                channel=who.audience.channel,
                thread_ts=who.audience.thread_ts,
                response_url=who.audience.response_url,
            )
        )
        view = batch_reject_modal(metadata, count=len(pause_ids))
        try:
            await self._client.views_open(trigger_id=trigger_id, view=view)
        except SlackApiError as error:
            log.warning("slack: the batch reject modal did not open: %s", api_error(error))

    def open_metadata(self, sealed: str, *, user: str) -> ModalMetadata | None:
        """A batch reject modal's metadata, if intact and opened by ``user``."""
        metadata = self._signer.open(sealed, kind="batch-reject", user=user)
        if metadata is None:
            log.warning("slack: a batch reject modal from user %s came back altered", user)
        return metadata

    async def record_reject(
        self, metadata: ModalMetadata, who: Answerer, values: StateValues
    ) -> ModalAnswer:
        """A batch reject submission, recorded before its ack: each question rejected with
        the one reason (required: a blank one keeps the modal open, nothing recorded)."""
        pause_ids = self._sealer.open(metadata.pause_id, user=who.user, tenant_id=who.tenant_id)
        if pause_ids is None:
            return ModalAnswer(errors={REASON_BLOCK: TAMPERED})
        reason = reject_reason(values)
        if reason is None:
            return ModalAnswer(errors={REASON_BLOCK: BATCH_REASON_REQUIRED})
        decision = ToolCallApprovalDecision(approved=False, reason=truncate(reason, MAX_REASON))
        return ModalAnswer(after=await self._record(pause_ids, who, decision))

    def _open_picks(self, picked: Sequence[str], who: Answerer) -> list[str] | str:
        """The pause ids of the ticked questions, or what to tell the person instead: one
        value that does not open for ``who`` (another person's, forged) refuses them all."""
        if not picked:
            return BATCH_NONE_SELECTED
        pause_ids: list[str] = []
        for value in picked:
            opened = self._sealer.open(value, user=who.user, tenant_id=who.tenant_id)
            if opened is None:
                log.warning("slack: refused a selection with a value that does not open")
                return BATCH_NOT_YOURS
            pause_ids.extend(opened)
        return list(dict.fromkeys(pause_ids))

    async def _record(
        self, pause_ids: list[str], who: Answerer, decision: ToolCallApprovalDecision
    ) -> AfterAck:
        outcomes = await self._answering.record_batch(pause_ids, who, decision)
        action: BatchAction = "approve" if decision.approved else "reject"
        said = batch_reply(self._gateway, outcomes, who.user, action)
        if _on_home(who):  # kept before the runs move: the Home refreshes they cause show it
            await self._home.keep_said(tenant_id=who.tenant_id, user=who.user, said=said)
        return functools.partial(self._after, outcomes, who, said)

    async def _after(self, outcomes: Sequence[AnswerOutcome], who: Answerer, said: str) -> None:
        """After a batch's ack: the runs move, then the person is told what became of each
        question (``said``) where they answered: in their ephemeral list (shown again as it
        now is), or on their App Home, republished with the lines above the list."""
        await self._answering.after_batch(outcomes)
        if _on_home(who):
            await self._home.publish(tenant_id=who.tenant_id, user=who.user)
            return
        await self._feedback.tell(who.audience, said)
        await self._refresh_list(who)


def _on_home(who: Answerer) -> bool:
    """Whether ``who`` clicked on their App Home (neither an ephemeral list nor a message)."""
    return who.audience.response_url is None and who.audience.channel is None
