"""The multi-step interactions behind the listeners: modals, pages, /pending, thread replies.

Each method is what one listener does after (or, for an edit submission, right before) its
ack. Answering itself is ``channels.slack.answering``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, assert_never

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.app import App
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import PauseStatus
from bot.core.errors import OVERRIDES_FIELD
from channels.kit.offers import not_offered
from channels.slack.answering import AfterAck, Answerer, Answering, ModalAnswer, ReplyPlace
from channels.slack.batch_seal import BatchSealer
from channels.slack.button_values import Shown, shown_round_of
from channels.slack.conversations import Conversations
from channels.slack.feedback import Feedback
from channels.slack.gateway import SlackGateway
from channels.slack.home import HomeTabs
from channels.slack.pending import PendingLists
from channels.slack.redaction import log, web_log
from channels.slack.render import RenderError, truncate
from channels.slack.render_approvals import reassign_modal
from channels.slack.render_edit import StateValues, validate_edit_submission
from channels.slack.render_modal import (
    REASON_BLOCK,
    edit_modal,
    modal_response,
    reject_modal,
    reject_reason,
    respond_modal,
)
from channels.slack.render_pending import pending_list
from channels.slack.signing import MetadataSigner, ModalKind, ModalMetadata
from channels.slack.store import SlackMessageStore
from channels.slack.threads import SlackThread
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of

TAMPERED: Final = (
    "This form could not be verified. Close it and click the button on the message again."
)
SEVERAL_IN_THREAD: Final = (
    "Several requests wait in this thread: answer each with the buttons on its message."
)
SEVERAL_IN_MESSAGE: Final = (
    "This message asks several requests and a reply cannot tell which one it answers: "
    "nothing was answered. Use the buttons of the request you mean."
)
MAX_REASON: Final = 3000  # ToolCallApprovalDecision's limit (the modal's too)
MAX_ERROR: Final = 300  # what a modal shows under an input
EMPTY_REQUEST: Final = "Tell me what to do in the same message, e.g. “refund order 7”."


@dataclass(frozen=True, slots=True, kw_only=True)
class EditChecked:
    """An edit submission's fate, decided before its ack.

    ``errors`` for ``ack(response_action="errors")``; else ``overrides`` to approve with; else
    neither (the modal just closes, the user was or will be told why).
    """

    errors: dict[str, str] | None = None
    overrides: dict[str, Any] | None = None
    metadata: ModalMetadata | None = None


class Flows:
    def __init__(
        self,
        *,
        app: App,
        client: AsyncWebClient,
        gateway: SlackGateway,
        messages: SlackMessageStore,
        answering: Answering,
        conversations: Conversations,
        feedback: Feedback,
        lists: PendingLists,
        home: HomeTabs,
        signer: MetadataSigner,
        session: aiohttp.ClientSession | None,
    ) -> None:
        self._app = app
        self._client = client
        self._gateway = gateway
        self._messages = messages
        self._answering = answering
        self._conversations = conversations
        self._feedback = feedback
        self._lists = lists
        self._home = home
        self._signer = signer
        self._session = session
        self._batch_seal = BatchSealer(app.derived_keys)

    # ---------------------------------------------------------------- buttons

    async def approve(self, shown: Shown, who: Answerer) -> None:
        """An Approve click, recorded and finished."""
        after = await self.record_approval(shown, who)
        await after()

    async def record_approval(self, shown: Shown, who: Answerer) -> AfterAck:
        """An Approve click (``shown``: the question and proposal its surface showed),
        recorded before its ack; the rest follows the ack."""
        after = await self._answering.record_decision(
            shown, who, ToolCallApprovalDecision(approved=True)
        )
        return self._then_refresh(after, who)

    async def open_modal(
        self, kind: ModalKind, shown: Shown, who: Answerer, trigger_id: str
    ) -> None:
        """Open the reject or edit modal (``trigger_id`` lives 3 s: nothing slow comes first).
        Its metadata says which proposal it answers: the edit modal's, the one it shows (the
        proposal as it stands now); the others', the one the clicked surface showed."""
        pause_id = shown.pause_id
        pause = await self._answering.waiting_pause(pause_id, who)
        if pause is None:
            return
        offers = self._gateway.approval_view(pause).offered
        if kind != "reassign" and not offers.allows(kind):
            await self._feedback.tell(who.audience, not_offered(offers))
            return
        metadata = self._signer.seal(
            ModalMetadata(
                kind=kind,
                pause_id=pause_id,
                user=who.user,
                channel=who.audience.channel,
                thread_ts=who.audience.thread_ts,
                response_url=who.audience.response_url,
                shown_round=shown_round_of(pause) if kind == "edit" else shown.round,
            )
        )
        match kind:
            case "reject":
                view = reject_modal(metadata, reason_required=pause.reject_reason == "required")
            case "respond":
                view = respond_modal(metadata)
            case "reassign":  # handing it on (channels.slack.handing)
                view = reassign_modal(metadata)
            case "edit":
                try:
                    view = edit_modal(self._gateway.approval_view(pause), metadata)
                except RenderError as error:
                    log.warning("slack: the edit modal cannot be shown: %s", error.code)
                    await self._feedback.tell(
                        who.audience, "These arguments cannot be edited here: approve or reject."
                    )
                    return
            case _:
                assert_never(kind)
        try:
            await self._client.views_open(trigger_id=trigger_id, view=view)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: the %s modal did not open: %s", kind, failure_of(error))

    # ---------------------------------------------------------------- modal submissions

    def open_metadata(self, sealed: str, *, kind: ModalKind, user: str) -> ModalMetadata | None:
        metadata = self._signer.open(sealed, kind=kind, user=user)
        if metadata is None:
            log.warning("slack: a %s modal from user %s came back altered: refused", kind, user)
        return metadata

    async def record_reject(
        self, metadata: ModalMetadata, who: Answerer, values: StateValues
    ) -> ModalAnswer:
        """A reject submission, recorded before its ack; the rest follows the ack. Without
        the reason its role requires it is refused: the reason's error keeps the modal open."""
        reason = reject_reason(values)
        decision = ToolCallApprovalDecision(
            approved=False, reason=None if reason is None else truncate(reason, MAX_REASON)
        )
        answer = await self._answering.record_from_modal(shown_in(metadata), who, decision)
        if answer.errors:
            return ModalAnswer(errors={REASON_BLOCK: _one_text(answer.errors.values())})
        return ModalAnswer(after=self._then_refresh(answer.after, who))

    async def record_respond(
        self, metadata: ModalMetadata, who: Answerer, values: StateValues
    ) -> ModalAnswer:
        """An answer in place of the tool (the respond modal), recorded before its ack; the
        modal requires the text, so a blank one is only a forged submission: nothing recorded."""
        response = modal_response(values)
        if response is None:
            return ModalAnswer()
        decision = ToolCallApprovalDecision(approved=False, response=truncate(response, MAX_REASON))
        after = await self._answering.record_decision(shown_in(metadata), who, decision)
        return ModalAnswer(after=self._then_refresh(after, who))

    async def check_edit(
        self, sealed: str, *, user: str, tenant_id: str, values: StateValues
    ) -> EditChecked:
        """Validate an edit submission before its ack: errors keep the modal open."""
        metadata = self.open_metadata(sealed, kind="edit", user=user)
        if metadata is None:
            first = next(iter(values), REASON_BLOCK)
            return EditChecked(errors={first: TAMPERED})
        pause = await self._app.find_pause(metadata.pause_id, tenant_id=tenant_id)
        if pause is None or pause.status is not PauseStatus.PENDING:
            return EditChecked(metadata=metadata)  # closes; the decide step tells them why
        overrides, errors = validate_edit_submission(self._gateway.approval_view(pause), values)
        if errors:
            return EditChecked(errors=errors)
        return EditChecked(overrides=overrides or {}, metadata=metadata)

    async def record_edit(
        self, checked: EditChecked, who: Answerer, values: StateValues
    ) -> ModalAnswer:
        """An edit submission (checked), recorded before its ack; the rest follows the ack.
        What the runtime refuses (a number that is no number, ...) is each input's error: the
        modal stays open."""
        if checked.metadata is None:
            return ModalAnswer()
        decision = ToolCallApprovalDecision(approved=True, override_arguments=checked.overrides)
        answer = await self._answering.record_from_modal(shown_in(checked.metadata), who, decision)
        if answer.errors:
            return ModalAnswer(errors=_edit_errors(answer.errors, values))
        return ModalAnswer(after=self._then_refresh(answer.after, who))

    def _then_refresh(self, after: AfterAck, who: Answerer) -> AfterAck:
        async def then() -> None:
            await after()
            await self.refresh_list(who)

        return then

    # ---------------------------------------------------------------- lists

    async def pending(self, who: Answerer, response_url: str, *, page: int = 1) -> None:
        """The caller's list, ephemeral, through the command's (or list's) ``response_url``."""
        items = await self._lists.for_user(tenant_id=who.tenant_id, user=who.user)
        rendered = pending_list(items, page=page, seal=self._sealer(who))
        webhook = AsyncWebhookClient(response_url, session=self._session, logger=web_log)
        try:  # best-effort, as every ephemeral (``channels.slack.feedback``)
            sent = await webhook.send(
                text=rendered.text,
                blocks=rendered.blocks,
                response_type="ephemeral",
                replace_original=True,
            )
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: the pending list was not sent: %s", failure_of(error))
            return
        if sent.status_code >= 400:
            log.warning("slack: the pending list was not sent: HTTP %s", sent.status_code)

    def _sealer(self, who: Answerer) -> Callable[[Sequence[str]], str]:
        """Seals an "Approve all" of ``who``'s list for them alone."""
        return functools.partial(self._batch_seal.seal, user=who.user, tenant_id=who.tenant_id)

    async def page(self, who: Answerer, page: int) -> None:
        """Another page of the list where it was clicked: an ephemeral list or the Home."""
        if who.audience.response_url is not None:
            await self.pending(who, who.audience.response_url, page=page)
        else:
            await self._home.publish(tenant_id=who.tenant_id, user=who.user, page=page)

    async def refresh_list(self, who: Answerer) -> None:
        """An answer given from an ephemeral list: show the list as it now is."""
        if who.audience.response_url is not None:
            await self.pending(who, who.audience.response_url)

    # ---------------------------------------------------------------- thread replies

    async def record_thread_reply(
        self, who: Answerer, place: ReplyPlace, text: str
    ) -> AfterAck | None:
        """A reply in a thread, read and recorded before its ack (None: no question waits
        there); the rest follows the ack."""
        refs = await self._messages.open_in_thread(place.channel, place.thread_ts)
        if not refs:
            return None
        if len(refs) > 1:
            one_message = len({ref.ts for ref in refs}) == 1  # a turn's questions, together
            said = SEVERAL_IN_MESSAGE if one_message else SEVERAL_IN_THREAD
            return functools.partial(self._feedback.tell, who.audience, said)
        return await self._answering.record_reply(refs[0].pause_id, who, text, place)

    # ---------------------------------------------------------------- starting work

    async def start(
        self, thread: SlackThread, *, tenant_id: str, user: str, text: str, reply: bool
    ) -> None:
        """Start the entry workflow from a mention; ``reply`` when the mention is in a thread.

        A mention in a thread where a question waits is an answer (the message listener
        reads it), not new work.
        """
        if reply and await self._messages.open_in_thread(thread.channel, thread.ts):
            return
        if not text:
            await self._gateway.say_in_thread(thread.channel, thread.ts, EMPTY_REQUEST)
            return
        await self._conversations.start(thread=thread, tenant_id=tenant_id, user=user, text=text)


def shown_in(metadata: ModalMetadata) -> Shown:
    """The question and the proposal a modal showed, as its metadata says."""
    return Shown(pause_id=metadata.pause_id, round=metadata.shown_round)


def _one_text(errors: Iterable[str]) -> str:
    """Several errors of one input as one text (each once), short enough for Slack."""
    return truncate(" ".join(dict.fromkeys(errors)), MAX_ERROR)


def _edit_errors(errors: Mapping[str, str], values: StateValues) -> dict[str, str]:
    """The runtime's errors of an edit by the modal's input blocks (an argument's block is its
    key); one about no input the modal has goes on its first input, so Slack shows it."""
    first = next(iter(values), REASON_BLOCK)
    prefix = f"{OVERRIDES_FIELD}."
    blocks: dict[str, list[str]] = {}
    for field, said in errors.items():
        key = field.removeprefix(prefix) if field.startswith(prefix) else ""
        blocks.setdefault(key if key in values else first, []).append(said)
    return {block: _one_text(said) for block, said in blocks.items()}
