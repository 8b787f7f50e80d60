"""The Slack side of a channel: post an approval message, show its outcome, write in threads.

``SlackBot`` provides one ``SlackGateway`` to the App (``app.provide``), so the Slack channels
made by ``channels.slack.slack_channel`` get it injected (``deps=[SlackGateway, ...]``). The bot
uses the same gateway to update a message once its pause is answered (from the App's resume
events, which carry the answered pauses: nothing is read back).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import App
from bot.core.channel import (
    ChannelAsk,
    ChannelAutoDecision,
    ChannelEscalation,
    ChannelReminder,
    ChannelWithdrawal,
)
from bot.core.enums import PauseAnswerer, PauseStatus
from bot.core.errors import ChannelUnavailableError, SetupError
from bot.core.results import PauseView
from channels.kit.approvals import nobody_yet
from channels.kit.outcomes import Outcome
from channels.slack.catalog import Catalog, SlackChannelConfig
from channels.slack.notes import NoteRef, RequesterNotes
from channels.slack.nudge_marks import end_mark, find_marked, nudge_mark, question_mark
from channels.slack.outcomes import approval_view, closed_resolution, outcome_of
from channels.slack.redaction import log, redact
from channels.slack.render import ApprovalView, escape
from channels.slack.render_message import (
    approval_message,
    escalation_text,
    outcome_message,
    reminder_text,
)
from channels.slack.render_note import settled_note, waiting_note
from channels.slack.store import MessageRef, SlackMessageStore
from channels.slack.tenant_tokens import speaking_for
from channels.slack.threads import SlackThread
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of, is_transient

MAX_THREAD_TEXT: Final = 3000


@dataclass(frozen=True, slots=True, kw_only=True)
class ClosedQuestion:
    """Whose question's message now shows an outcome (e.g. to refresh their App Home)."""

    tenant_id: str
    answered_by: PauseAnswerer
    role: str
    owner_id: str


ChangeListener = Callable[[ClosedQuestion], None]
Question = ChannelAsk | ChannelWithdrawal | ChannelReminder | ChannelEscalation


class SlackGateway:
    """Posts and updates approval messages; keeps their references."""

    def __init__(
        self,
        *,
        app: App,
        client: AsyncWebClient,
        messages: SlackMessageStore,
        notes: RequesterNotes,
        catalog: Catalog,
    ) -> None:
        self._app = app
        self.client = client
        self.messages = messages
        self.notes = notes
        self._catalog = catalog
        self._listeners: list[ChangeListener] = []
        self.owed: dict[str, str] = {}
        """Messages whose update Slack failed (pause id → tenant id): ``catch_up`` retries."""
        self._scanned = False
        self._unknown_posts: set[str] = set()
        """Pauses whose question was posted with no answer (a timeout, a dropped connection)."""

    def on_change(self, listener: ChangeListener) -> None:
        """Called for each question whose message now shows an outcome."""
        self._listeners.append(listener)

    # ---------------------------------------------------------------- the question

    async def post_approval(
        self, ask: ChannelAsk, *, implementation: str, config: SlackChannelConfig
    ) -> MessageRef:
        """Post the question once; a retried send finds the stored reference and posts nothing.

        When Slack fails in a way trying again may mend (5xx, 429 once retried, refused, timed
        out) this raises ``ChannelUnavailableError``: the question waits, not yet delivered,
        and is asked again. A post whose answer never came may have been posted: the next one
        first looks for its mark (``question_mark``) where it would be."""
        existing = await self.messages.get(ask.pause_id)
        if existing is not None:
            return existing
        channel, thread_ts = _destination(ask, config)
        view = self._question_view(ask)
        mark = question_mark(ask.pause_id)
        try:
            posted: Mapping[str, Any] | None
            posted = await self._find_unknown_post(ask.pause_id, mark, channel, thread_ts)
            if posted is None:
                rendered = approval_message(view)
                response = await self.client.chat_postMessage(
                    channel=channel,
                    thread_ts=thread_ts,
                    text=rendered.text,
                    blocks=rendered.blocks,
                    metadata=mark,
                )
                posted = {"channel": response.get("channel"), "ts": response["ts"]}
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            if not is_transient(error):
                raise
            if not isinstance(error, SlackApiError):  # no answer came: it may be posted
                self._unknown_posts.add(ask.pause_id)
            raise ChannelUnavailableError(
                f"Slack could not take the question now ({failure_of(error)}); it is asked again"
            ) from error
        self._unknown_posts.discard(ask.pause_id)
        assert posted is not None
        ref = MessageRef(
            pause_id=ask.pause_id,
            tenant_id=ask.tenant_id,
            channel_id=str(posted.get("channel") or channel),
            ts=str(posted["ts"]),
            thread_ts=thread_ts,
            role=ask.role,
            implementation=implementation,
        )
        if not await self.messages.add(ref, self._app.clock.now()):
            # another send stored its message first: keep that one, take ours back
            await self._delete_quietly(ref)
            stored = await self.messages.get(ask.pause_id)
            if stored is not None:
                return stored
        await self._post_note(ask, view, ref)
        return ref

    async def _find_unknown_post(
        self, pause_id: str, mark: dict[str, Any], channel: str, thread_ts: str | None
    ) -> Mapping[str, Any] | None:
        """The question's message if an earlier post of it, whose answer never came, reached
        Slack; None when there was no such post or it is not there."""
        if pause_id not in self._unknown_posts:
            return None
        found = await find_marked(
            self.client, mark, channel=channel, thread_ts=thread_ts, strict=True
        )
        if found is None:
            return None
        return {"channel": found.get("channel") or channel, "ts": found["ts"]}

    async def _post_note(self, ask: ChannelAsk, view: ApprovalView, ref: MessageRef) -> None:
        """Tell the requester, in the thread where they started the work, where the request
        waits; nothing when it waits in that very thread or the work was not started in Slack.
        A note that cannot be posted is logged: the question is asked all the same."""
        thread = SlackThread.parse(ask.thread_id)
        if thread is None or (thread.channel, thread.ts) in (
            (ref.channel_id, ref.thread_ts),
            (ref.channel_id, ref.ts),
        ):
            return
        rendered = waiting_note(view, conversation=ref.channel_id)
        try:
            response = await self.client.chat_postMessage(
                channel=thread.channel,
                thread_ts=thread.ts,
                text=rendered.text,
                blocks=rendered.blocks,
            )
        except (SlackApiError, *TRANSPORT_ERRORS) as error:  # the question was asked all the same
            log.warning("slack: the requester's note was not posted: %s", failure_of(error))
            return
        note = NoteRef(
            channel_id=str(response.get("channel") or thread.channel),
            ts=str(response["ts"]),
            thread_ts=thread.ts,
        )
        await self.notes.add(ask.pause_id, note, self._app.clock.now())

    # ---------------------------------------------------------------- the outcome

    async def show_outcome(self, pause: PauseView, *, fallback: Outcome | None = None) -> bool:
        """Update the message of ``pause`` (as the runtime gave it: no read back) to show how it
        was resolved, without buttons; whether a message was updated. Nothing happens while the
        pause still waits, or when it has no open message (its outcome is shown already)."""
        outcome = outcome_of(pause) or fallback
        if outcome is None:
            return False
        closed = ClosedQuestion(
            tenant_id=pause.tenant_id,
            answered_by=pause.answered_by,
            role=pause.role,
            owner_id=pause.owner_id,
        )
        return await self._show(pause.pause_id, self.approval_view(pause), outcome, closed)

    async def show_withdrawn(
        self, withdrawal: ChannelWithdrawal, *, answered_by: PauseAnswerer
    ) -> bool:
        """Update the message of a question that closed without an answer, from what the
        withdrawal carries (no read back)."""
        outcome = closed_resolution(withdrawal.resolution, by=withdrawal.cancelled_by)
        view = self._question_view(withdrawal)
        closed = ClosedQuestion(
            tenant_id=withdrawal.tenant_id,
            answered_by=answered_by,
            role=withdrawal.role,
            owner_id=withdrawal.owner_id,
        )
        return await self._show(withdrawal.pause_id, view, outcome, closed)

    async def _show(
        self, pause_id: str, view: ApprovalView, outcome: Outcome, closed: ClosedQuestion
    ) -> bool:
        refs = [ref for ref in await self.messages.copies(pause_id) if not ref.closed]
        if not any(not ref.escalated_copy for ref in refs):
            return False
        rendered = outcome_message(view, outcome)
        for ref in refs:  # the question, and its escalated copy
            try:
                await self.client.chat_update(
                    channel=ref.channel_id, ts=ref.ts, text=rendered.text, blocks=rendered.blocks
                )
            except (SlackApiError, *TRANSPORT_ERRORS) as error:
                if is_transient(error):  # the message still offers its buttons: owed
                    self.owed[pause_id] = closed.tenant_id
                raise
        self.owed.pop(pause_id, None)
        await self.messages.close(pause_id, self._app.clock.now())
        for listener in self._listeners:
            listener(closed)
        await self._settle_note(pause_id, view, outcome)
        return True

    async def catch_up(self) -> int:
        """Update the messages still offering buttons for a question that closed: those whose
        update Slack failed, and on the first call every one left open by an earlier process
        (``messages.open_questions``). Stops at the first failure Slack may mend later (the next
        call goes on); how many were updated."""
        if not self._scanned:
            await self._find_owed()
            self._scanned = True
        updated = 0
        for pause_id, tenant_id in list(self.owed.items()):
            pause = await self._app.find_pause(pause_id, tenant_id=tenant_id)
            if pause is None or pause.status is PauseStatus.PENDING:
                self.owed.pop(pause_id, None)
                continue
            try:
                with speaking_for(tenant_id):  # installed by OAuth: the tenant's own token
                    updated += await self.show_outcome(pause)
            except (SlackApiError, *TRANSPORT_ERRORS) as error:
                if is_transient(error):
                    return updated  # Slack is still failing: the next call
                log.warning(
                    "slack: a closed question's message was not updated: %s", failure_of(error)
                )
            self.owed.pop(pause_id, None)
        return updated

    async def _find_owed(self) -> None:
        after: str | None = None
        while True:
            page = await self.messages.open_questions(after=after, limit=100)
            if not page:
                return
            for ref in page:
                pause = await self._app.find_pause(ref.pause_id, tenant_id=ref.tenant_id)
                if pause is not None and pause.status is not PauseStatus.PENDING:
                    self.owed[ref.pause_id] = ref.tenant_id
            after = page[-1].pause_id

    # ---------------------------------------------------------------- time on the question

    async def remind(self, reminder: ChannelReminder, *, config: SlackChannelConfig) -> None:
        """A reply in the question's thread mentioning who may answer (once it is escalated,
        its ``escalate_to`` people too); nothing once the message shows an outcome, nor when a
        resend finds it already there."""
        ref = await self.messages.get(reminder.pause_id)
        if ref is None or ref.closed:
            return
        approvers = config.approvers or (reminder.owner_id,)
        if reminder.escalated:
            approvers = tuple(dict.fromkeys((*approvers, *config.escalate_to)))
        text = reminder_text(
            self._question_view(reminder),
            approvers,
            reminded=reminder.reminded,
            expires_at=reminder.expires_at,
        )
        await self._nudge_in_thread(ref, reminder.nudge_key, text, retried=reminder.retried)

    async def escalate(
        self, escalation: ChannelEscalation, *, implementation: str, config: SlackChannelConfig
    ) -> None:
        """Ask the question again where it escalates to (the same buttons, the same pause),
        once; without an escalation conversation, a reply in its thread mentioning them."""
        ref = await self.messages.get(escalation.pause_id)
        if ref is None or ref.closed:
            return
        view = self._question_view(escalation)
        where = config.escalation_conversation
        text = escalation_text(view, config.escalate_to, where=where)
        await self._nudge_in_thread(ref, escalation.nudge_key, text, retried=escalation.retried)
        if where is None or any(r.escalated_copy for r in await self.messages.copies(ref.pause_id)):
            return
        mark = nudge_mark(ref, f"{escalation.nudge_key}-copy")
        posted = None
        if escalation.retried:  # the copy may be there, posted by the sweep that died
            posted = await find_marked(self.client, mark, channel=where, since=escalation.asked_at)
        if posted is None:
            rendered = approval_message(view)
            response = await self.client.chat_postMessage(
                channel=where, text=rendered.text, blocks=rendered.blocks, metadata=mark
            )
            posted = {"channel": response.get("channel"), "ts": response["ts"]}
        copy = MessageRef(
            pause_id=escalation.pause_id,
            tenant_id=escalation.tenant_id,
            channel_id=str(posted.get("channel") or where),
            ts=str(posted["ts"]),
            thread_ts=None,
            role=escalation.role,
            implementation=implementation,
            escalated_copy=True,
        )
        if not await self.messages.add(copy, self._app.clock.now()):
            await self._delete_quietly(copy)

    def _question_view(self, question: Question) -> ApprovalView:
        """The question as it was asked (its real arguments: every renderer masks them)."""
        tool, role = question.value.tool, question.role
        return ApprovalView(
            pause_id=question.pause_id,
            tool=tool,
            tool_description=self._catalog.tool_description(tool, agent=question.agent, role=role),
            arguments=question.value.arguments,
            input_model=self._catalog.tool_input(tool, agent=question.agent, role=role),
            agent=question.agent,
            owner_id=question.owner_id,
            role=role,
            role_description=self._catalog.role_description(role),
            reads_replies=self._catalog.role_reads_replies(role),
            separates_duties=self._catalog.role_separates_duties(role),
            expires_at=None if isinstance(question, ChannelWithdrawal) else question.expires_at,
            description=question.value.description,
            allowed_decisions=question.value.allowed_decisions,
            request=question.value.request,
            stated_reason=question.value.stated_reason,
            question=self._catalog.question_template(tool, agent=question.agent, role=role),
            approvals=_needed(self._catalog, question),
            reassignable=_reassignable(self._catalog, question),
        )

    def approval_view(self, pause: PauseView) -> ApprovalView:
        """What the message of ``pause`` shows (its real arguments: every renderer masks them)."""
        return approval_view(
            pause,
            role_description=self._catalog.role_description(pause.role),
            reads_replies=self._catalog.role_reads_replies(pause.role),
            separates_duties=self._catalog.role_separates_duties(pause.role),
            question=self._catalog.question_template(
                pause.ask.tool, agent=pause.agent, role=pause.role
            ),
        )

    async def _settle_note(self, pause_id: str, view: ApprovalView, outcome: Outcome) -> None:
        """Update the requester's note (if the request has one) with the outcome."""
        note = await self.notes.get(pause_id)
        if note is None:
            return
        rendered = settled_note(view, outcome)
        try:
            await self.client.chat_update(
                channel=note.channel_id, ts=note.ts, text=rendered.text, blocks=rendered.blocks
            )
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: the requester's note was not updated: %s", failure_of(error))

    async def _nudge_in_thread(
        self, question: MessageRef, nudge_key: str, text: str, *, retried: bool
    ) -> None:
        """Post a nudge's ``text`` in the question's thread, marked with its key; a resend
        that finds its mark there posts nothing."""
        mark = nudge_mark(question, nudge_key)
        channel, thread = question.channel_id, question.thread
        if retried and await find_marked(self.client, mark, channel=channel, thread_ts=thread):
            return
        await self.say_in_thread(channel, thread, text, metadata=mark)

    async def tell_auto_decided(self, decided: ChannelAutoDecision) -> None:
        """Tell the requester, in the Slack thread where they started the work, that a policy
        decided their request at once ("Refunds a card was approved automatically by
        refund-policy: under 50.00"); nothing when the work was not started in Slack."""
        thread = SlackThread.parse(decided.thread_id)
        if thread is None:
            return
        what = self._catalog.tool_description(
            decided.value.tool, agent=decided.agent, role=decided.role
        )
        mark = ":white_check_mark:" if decided.approved else ":x:"
        text = (
            f"{mark} *{escape(what or decided.value.tool, 200)}* was {escape(decided.text, 2000)}"
        )
        await self.say_in_thread(thread.channel, thread.ts, text)

    # ---------------------------------------------------------------- threads

    async def tell_run_end(
        self, channel: str, thread_ts: str, text: str, *, run_id: str, retried: bool
    ) -> None:
        """Post a run's end (its answer, or its failure) in its thread, marked with the run
        (``end_mark``). When Slack may take it later this raises ``ChannelUnavailableError``:
        the App keeps the end untold and its sweep tells it again (``retried``), which first
        looks for the mark, so an end Slack posted without answering is not said twice."""
        mark = end_mark(run_id)
        try:
            if retried and await find_marked(
                self.client, mark, channel=channel, thread_ts=thread_ts, strict=True
            ):
                return
            await self.client.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                text=redact(text)[:MAX_THREAD_TEXT],
                metadata=mark,
            )
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            if is_transient(error):
                raise ChannelUnavailableError(
                    f"Slack could not take the run's end now ({failure_of(error)})"
                ) from error
            log.warning(
                "slack: could not post in thread %s of %s: %s",
                thread_ts,
                channel,
                failure_of(error),
            )

    async def say_in_thread(
        self, channel: str, thread_ts: str, text: str, *, metadata: dict[str, Any] | None = None
    ) -> None:
        """Post ``text`` (mrkdwn, escaped by the caller) in a thread; failures are logged."""
        try:
            await self.client.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                text=redact(text)[:MAX_THREAD_TEXT],
                metadata=metadata,
            )
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning(
                "slack: could not post in thread %s of %s: %s",
                thread_ts,
                channel,
                failure_of(error),
            )

    async def _delete_quietly(self, ref: MessageRef) -> None:
        try:
            await self.client.chat_delete(channel=ref.channel_id, ts=ref.ts)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: a duplicate approval message stays: %s", failure_of(error))


def _needed(catalog: Catalog, question: Question) -> tuple[str, ...]:
    """A question just asked that needs several approvals says how many (with its buttons)."""
    shown = (
        None
        if isinstance(question, ChannelWithdrawal)
        else nobody_yet(catalog.required_approvals(question.role))
    )
    return () if shown is None else shown.lines()


def _reassignable(catalog: Catalog, question: Question) -> bool:
    """Whether a question just asked offers Reassign: a CHANNEL role's (a thread's owner's
    question is theirs)."""
    role = catalog.role(question.role)
    return (
        not isinstance(question, ChannelWithdrawal)
        and role is not None
        and role.answered_by is PauseAnswerer.CHANNEL
    )


def _destination(ask: ChannelAsk, config: SlackChannelConfig) -> tuple[str, str | None]:
    """Where to ask: the owner's Slack thread for a THREAD_OWNER role, else the conversation."""
    if config.answered_by is PauseAnswerer.THREAD_OWNER:
        thread = SlackThread.parse(ask.thread_id)
        if thread is not None:
            return thread.channel, thread.ts
    if config.conversation is None:
        raise SetupError(
            f"the role {config.role} asks in the owner's Slack thread, and thread "
            f"{ask.thread_id} was not started in Slack: give its channel a conversation"
        )
    return config.conversation, None


def quote(text: str, limit: int = 200) -> str:
    """Outside text shown inside our messages: one line, escaped, cut."""
    return escape(" ".join(text.split()), limit)
