"""The Slack side of a channel: post an approval message, show its outcome, write in threads.

``SlackBot`` provides one ``SlackGateway`` to the App (``app.provide``), so the Slack channels
made by ``channels.slack.slack_channel`` get it injected (``deps=[SlackGateway, ...]``). The bot
uses the same gateway to update a message once its pause is answered (from the App's resume
events, which carry the answered pauses: nothing is read back).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final
from uuid import uuid4

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
from bot.core.results import EndTold, PauseView
from bot.core.routes import PauseRoute
from bot.store.outbox import OutboxEntry
from channels.kit.answerers import without_requester
from channels.kit.approvals import nobody_yet
from channels.kit.grants import offered_scopes
from channels.kit.outcomes import Outcome
from channels.slack.catalog import Catalog, SlackChannelConfig
from channels.slack.escalation_copies import EscalationCopies
from channels.slack.notes import RequesterNotes
from channels.slack.nudge_marks import end_mark, find_marked, nudge_mark, question_mark
from channels.slack.outbox import CLAIM, NotYet, SlackOutbox, key_of, note_key
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
from channels.slack.threads import SlackThread
from channels.slack.turn_messages import TurnMessages, turn_key
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of, is_transient
from channels.slack.workspaces import WorkspaceConfigs

MAX_THREAD_TEXT: Final = 3000
UPDATE: Final = "update"
"""The outbox's kind for a question's message behind its state: a closed one still offering
its buttons, a waiting one not yet showing who approved."""
UPDATE_ROUNDS: Final = 3
"""How often a waiting question's message is rendered again when it changed while updated."""
QUESTION: Final = "question"
"""The outbox's kind for a question's post under way: until its message is known, any instance
that asks it again looks for its mark first, and once the question closed unasked, the worker
takes the buttons off a message Slack made without saying so (a hang)."""


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
        outbox: SlackOutbox,
    ) -> None:
        self._app = app
        self.client = client
        self.messages = messages
        self.notes = notes
        self._catalog = catalog
        self.outbox = outbox
        """What is owed to Slack (notes, lines, updates, ends) until it is said."""
        outbox.deliver_kind(UPDATE, self._deliver_update)
        outbox.deliver_kind(QUESTION, self._deliver_unasked)
        self.turns = TurnMessages(
            app=app, client=client, messages=messages, view_of=self.approval_view
        )
        """Which message asks each model turn's questions together (``turn_messages``)."""
        self.escalation_copies = EscalationCopies(
            app=app, client=client, messages=messages, outbox=outbox, view=self.approval_view
        )
        self._showing: set[str] = set()
        """The questions whose outcome this process is showing now (``_show``)."""
        self.workspaces = WorkspaceConfigs(catalog)
        """Where each workspace asks and who answers there (``SlackBot`` sets its settings)."""
        self._listeners: list[ChangeListener] = []
        self._scanned = False
        self._started = app.clock.now()

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
        and is asked again. The post is recorded under way first (the outbox's ``QUESTION``
        entry, in the database): a post whose answer never came may have been made, so the
        next one, by any instance, first looks for its mark (``question_mark``)."""
        channel, thread_ts = _destination(ask, config)
        if ask.turn is None:
            existing = await self.messages.get(ask.pause_id)
            if existing is not None:
                return existing
            return await self._post_question(ask, implementation, channel, thread_ts)
        key = turn_key(ask, implementation=implementation, channel=channel, thread_ts=thread_ts)
        async with self.turns.asking(key, ask.pause_id) as where:  # one of the turn at a time
            if where.own is not None:
                return where.own
            if where.message is not None:
                return await self._join(ask, where.message, where.sharing, implementation)
            return await self._post_question(ask, implementation, channel, thread_ts, turn=key)

    async def _join(
        self, ask: ChannelAsk, message: MessageRef, sharing: Sequence[str], implementation: str
    ) -> MessageRef:
        """Ask ``ask`` in ``message``, the message of its turn (asking ``sharing``): its
        reference points there, all of theirs say it is shared, and the message is updated to
        list it (owed first: a process that dies before the update, or Slack failing it,
        leaves it to the outbox's worker)."""
        ref = replace(
            message,
            pause_id=ask.pause_id,
            role=ask.role,
            implementation=implementation,
            closed=False,
            shared=True,
        )
        ref = replace(ref, noted=_owes_note(ask, ref))
        owed = key_of(UPDATE, ask.pause_id)
        await self.outbox.owe(
            owed,
            UPDATE,
            {},
            tenant_id=ask.tenant_id,
            pause_id=ask.pause_id,
            try_now=False,
            due_in=CLAIM,
        )
        if not await self.messages.join(ref, sharing, self._app.clock.now()):
            stored = await self.messages.get(ask.pause_id)  # another send asked it first
            if stored is not None:
                return stored
        try:
            await self.turns.update(ref)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: a turn's message waits for its update: %s", failure_of(error))
            await self.outbox.store.retry_at(owed, self._app.clock.now())
        else:
            await self.outbox.store.done(owed)
        await self._post_note(ask, self._question_view(ask), ref)
        return ref

    async def _post_question(
        self,
        ask: ChannelAsk,
        implementation: str,
        channel: str,
        thread_ts: str | None,
        *,
        turn: str | None = None,
    ) -> MessageRef:
        """Post ``ask`` as a message of its own (see ``post_approval``); ``turn``: the key of
        the model turn whose siblings may join it."""
        view = self._question_view(ask)
        mark = question_mark(ask.pause_id)
        attempt = key_of(QUESTION, ask.pause_id)
        tried = await self.outbox.store.get(attempt) is not None
        if not tried:
            where = {"channel": channel, "thread_ts": thread_ts, "implementation": implementation}
            await self.outbox.owe(
                attempt,
                QUESTION,
                where,
                tenant_id=ask.tenant_id,
                pause_id=ask.pause_id,
                try_now=False,
                due_in=CLAIM,
            )
        try:
            posted: Mapping[str, Any] | None = None
            if tried:  # an earlier post got no answer: it may be there
                posted = await self._find_question(mark, channel, thread_ts)
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
                if not tried:  # refused: nothing of ours is there
                    await self.outbox.store.done(attempt)
                raise
            # the post is over: the worker watches it from now (closed unasked: no buttons)
            await self.outbox.store.retry_at(attempt, self._app.clock.now())
            raise ChannelUnavailableError(
                f"Slack could not take the question now ({failure_of(error)}); it is asked again"
            ) from error
        ref = MessageRef(
            pause_id=ask.pause_id,
            tenant_id=ask.tenant_id,
            channel_id=str(posted.get("channel") or channel),
            ts=str(posted["ts"]),
            thread_ts=thread_ts,
            role=ask.role,
            implementation=implementation,
            turn=turn,
        )
        ref = replace(ref, noted=_owes_note(ask, ref))
        if not await self.messages.add(ref, self._app.clock.now()):
            # another send stored its message first: keep that one, take ours back
            await self._delete_quietly(ref)
            stored = await self.messages.get(ask.pause_id)
            if stored is not None:
                return stored
        await self.outbox.store.done(attempt)
        await self._post_note(ask, view, ref)
        return ref

    async def _find_question(
        self, mark: dict[str, Any], channel: str, thread_ts: str | None
    ) -> Mapping[str, Any] | None:
        """The question's message carrying ``mark`` if Slack made it (its thread, or the
        conversation's latest messages); Slack's failure raised."""
        found = await find_marked(
            self.client, mark, channel=channel, thread_ts=thread_ts, strict=True
        )
        if found is None:
            return None
        return {"channel": found.get("channel") or channel, "ts": found["ts"]}

    async def _deliver_unasked(self, entry: OutboxEntry) -> None:
        """The outbox's look at a question whose post got no answer: once it closed before it
        was asked again, a message Slack made of it shows the outcome (no buttons)."""
        assert entry.pause_id is not None
        if await self.messages.get(entry.pause_id) is not None:
            return  # asked since: its message is known (and updated as any)
        pause = await self._app.find_pause(entry.pause_id, tenant_id=entry.tenant_id)
        if pause is None:
            return
        if pause.status is PauseStatus.PENDING:
            raise NotYet  # it waits to be asked again (the recovery sweep), which looks first
        where = entry.payload
        channel, thread_ts = str(where["channel"]), where.get("thread_ts")
        posted = await self._find_question(question_mark(entry.pause_id), channel, thread_ts)
        if posted is None:
            return  # never made: nothing offers its buttons
        ref = MessageRef(
            pause_id=pause.pause_id,
            tenant_id=pause.tenant_id,
            channel_id=str(posted.get("channel") or channel),
            ts=str(posted["ts"]),
            thread_ts=None if thread_ts is None else str(thread_ts),
            role=pause.role,
            implementation=str(where["implementation"]),
        )
        await self.messages.add(ref, self._app.clock.now())
        await self.show_outcome(pause)

    async def _post_note(self, ask: ChannelAsk, view: ApprovalView, ref: MessageRef) -> None:
        """Tell the requester, in the thread where they started the work, where the request
        waits; nothing when it waits in that very thread or the work was not started in Slack.
        A note Slack cannot take now is owed (the outbox): the question is asked all the same."""
        thread = SlackThread.parse(ask.thread_id)
        if thread is None or not _owes_note(ask, ref):
            return
        rendered = waiting_note(view, conversation=ref.channel_id)
        await self.outbox.post(
            key=note_key(ask.pause_id),
            channel=thread.channel,
            thread_ts=thread.ts,
            text=rendered.text,
            blocks=rendered.blocks,
            tenant_id=ask.tenant_id,
            pause_id=ask.pause_id,
            note=True,
        )

    # ---------------------------------------------------------------- the outcome

    async def show_outcome(
        self,
        pause: PauseView,
        *,
        fallback: Outcome | None = None,
        end_told: EndTold | None = None,
    ) -> bool:
        """Update the message of ``pause`` (as the runtime gave it: no read back) to show how it
        was resolved, without buttons; whether a message was updated. Nothing happens while the
        pause still waits, or when it has no open message (its outcome is shown already).

        ``end_told``: the run's end recorded told in the write that closes the message's
        references, when this call makes it (``EndTold.carried``); the caller says nothing
        more of its event after."""
        outcome = outcome_of(pause) or fallback
        if outcome is None:
            return False
        closed = ClosedQuestion(
            tenant_id=pause.tenant_id,
            answered_by=pause.answered_by,
            role=pause.role,
            owner_id=pause.owner_id,
        )
        view = self.approval_view(pause)
        return await self._show(pause.pause_id, view, outcome, closed, end_told)

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
        self,
        pause_id: str,
        view: ApprovalView,
        outcome: Outcome,
        closed: ClosedQuestion,
        end_told: EndTold | None = None,
    ) -> bool:
        """Show ``pause_id``'s outcome on its open messages, then close their references. One
        at a time a question in this process: a second caller while the first is under way (a
        duplicate click told "already answered", the resume event) leaves it to the first,
        which owes the update if Slack fails it."""
        if pause_id in self._showing:
            return True
        self._showing.add(pause_id)
        try:
            return await self._show_now(pause_id, view, outcome, closed, end_told)
        finally:
            self._showing.discard(pause_id)

    async def _show_now(
        self,
        pause_id: str,
        view: ApprovalView,
        outcome: Outcome,
        closed: ClosedQuestion,
        end_told: EndTold | None,
    ) -> bool:
        refs = [ref for ref in await self.messages.copies(pause_id) if not ref.closed]
        if not any(not ref.escalated_copy for ref in refs):
            if not refs:  # a post of it under way or lost in a hang: looked at now
                await self.outbox.store.retry_at(key_of(QUESTION, pause_id), self._app.clock.now())
            return False
        rendered = outcome_message(view, outcome)
        for ref in refs:  # the question, and its escalated copy
            try:
                if await self._shown_in_turn(ref):
                    continue
                await self.client.chat_update(
                    channel=ref.channel_id, ts=ref.ts, text=rendered.text, blocks=rendered.blocks
                )
            except (SlackApiError, *TRANSPORT_ERRORS) as error:
                if is_transient(error):  # the message still offers its buttons: owed
                    await self._owe_update(pause_id, closed.tenant_id)
                raise
        question = next(ref for ref in refs if not ref.escalated_copy)
        await self._settle_note(question, view, outcome, tenant_id=closed.tenant_id)
        told = None if end_told is None else end_told.root_execution_id
        await self.messages.close(pause_id, self._app.clock.now(), told=told)
        if end_told is not None:
            end_told.carried()
        for listener in self._listeners:
            listener(closed)
        return True

    async def _shown_in_turn(self, ref: MessageRef) -> bool:
        """Update the message of a turn ``ref`` asks in as its questions stand; False when
        it asks one question only (an escalated copy is its own question's)."""
        return not ref.escalated_copy and await self.turns.update(ref)

    async def _owe_update(self, pause_id: str, tenant_id: str) -> None:
        await self.outbox.owe(
            key_of(UPDATE, pause_id),
            UPDATE,
            {},
            tenant_id=tenant_id,
            pause_id=pause_id,
            try_now=False,
        )

    async def catch_up(self) -> int:
        """Deliver what is owed to Slack (``SlackOutbox.deliver_due``); on the first call, first
        owe the update of every message an earlier process left open for a question that closed
        (``messages.open_questions``), and of every waiting one approved before this process
        started (the one that counted it may have died before owing its update). How many
        things were said."""
        if not self._scanned:
            await self._find_owed()
            self._scanned = True
        return await self.outbox.deliver_due()

    async def _find_owed(self) -> None:
        after: str | None = None
        while True:
            page = await self.messages.open_questions(after=after, limit=100)
            if not page:
                return
            for ref in page:
                pause = await self._app.find_pause(ref.pause_id, tenant_id=ref.tenant_id)
                if pause is not None and pause.status is not PauseStatus.PENDING:
                    await self._owe_update(ref.pause_id, ref.tenant_id)
                elif pause is not None and self._counted_before(pause):
                    await self.owe_approvals(pause, try_now=False)  # one that died first
            after = page[-1].pause_id

    async def owe_approvals(self, pause: PauseView, *, try_now: bool = True) -> None:
        """Owe the update of ``pause``'s messages after an approval counted (or a hand-on) and
        (``try_now``) try it now: delivered from the question as it stands then (raises
        nothing)."""
        await self.outbox.owe(
            key_of(UPDATE, pause.pause_id, *map(str, _state(pause)[1:])),
            UPDATE,
            {},
            tenant_id=pause.tenant_id,
            pause_id=pause.pause_id,
            try_now=try_now,
        )

    def _counted_before(self, pause: PauseView) -> bool:
        """Whether ``pause``'s last approval was counted before this process started (one
        counted since is owed by its own answer)."""
        if not pause.approvals:
            return False
        at = datetime.fromisoformat(pause.approvals[-1].at)
        return at.replace(tzinfo=at.tzinfo or UTC) < self._started

    async def _deliver_update(self, entry: OutboxEntry) -> None:
        """The outbox's update of a question's message (raises what Slack failed with), as the
        question stands when delivered: its outcome once closed (moot once shown), else who
        approved so far; rendered again when it changed meanwhile (the last update shows the
        latest state). Nothing when the question is gone."""
        assert entry.pause_id is not None
        for _ in range(UPDATE_ROUNDS):
            pause = await self._app.find_pause(entry.pause_id, tenant_id=entry.tenant_id)
            if pause is None:
                return
            if pause.status is not PauseStatus.PENDING:
                await self.show_outcome(pause)
                return
            refs = [ref for ref in await self.messages.copies(pause.pause_id) if not ref.closed]
            rendered = approval_message(self.approval_view(pause))
            for ref in refs:  # the question, and its escalated copy
                if await self._shown_in_turn(ref):
                    continue
                await self.client.chat_update(
                    channel=ref.channel_id, ts=ref.ts, text=rendered.text, blocks=rendered.blocks
                )
            after = await self._app.find_pause(entry.pause_id, tenant_id=entry.tenant_id)
            if after is None or _state(after) == _state(pause):
                return

    # ---------------------------------------------------------------- time on the question

    async def remind(self, reminder: ChannelReminder, *, config: SlackChannelConfig) -> None:
        """A reply in the question's thread mentioning who may answer (once it is escalated,
        its ``escalate_to`` people too); nothing once the message shows an outcome, nor when a
        resend finds it already there."""
        ref = await self.messages.get(reminder.pause_id)
        if ref is None or ref.closed:
            return
        routed = reminder.route.approvers if reminder.route is not None else ()
        approvers = routed or config.approvers or (reminder.owner_id,)
        if reminder.escalated:
            approvers = tuple(dict.fromkeys((*approvers, *config.escalate_to)))
        approvers = self._not_the_requester(approvers, reminder)
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
        once, owed until Slack takes it; without an escalation conversation, a reply in its
        thread mentioning them."""
        ref = await self.messages.get(escalation.pause_id)
        if ref is None or ref.closed:
            return
        view = self._question_view(escalation)
        where = config.escalation_conversation
        text = escalation_text(
            view, self._not_the_requester(config.escalate_to, escalation), where=where
        )
        await self._nudge_in_thread(ref, escalation.nudge_key, text, retried=escalation.retried)
        if where is not None:  # owed until Slack takes it (``channels.slack.escalation_copies``)
            await self.escalation_copies.owe(
                escalation, ref, where=where, implementation=implementation
            )

    def _not_the_requester(
        self, people: Sequence[str], question: ChannelReminder | ChannelEscalation
    ) -> tuple[str, ...]:
        """Who to mention for ``question``: never its requester where its role separates
        duties (their answer would be refused: ``channels.kit.answerers``)."""
        return without_requester(people, question, self._catalog.role_separates_duties)

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
            separates_duties=self._catalog.role_separates_duties(role, _route(question)),
            expires_at=None if isinstance(question, ChannelWithdrawal) else question.expires_at,
            description=question.value.description,
            allowed_decisions=question.value.allowed_decisions,
            request=question.value.request,
            stated_reason=question.value.stated_reason,
            question=self._catalog.question_template(tool, agent=question.agent, role=role),
            grant_scopes=self.grant_scopes(role, _route(question)),
            approvals=_needed(self._catalog, question),
            reassignable=_reassignable(self._catalog, question),
            shown_round=0 if self._catalog.required_approvals(role) > 1 else None,  # as asked
        )

    def grant_scopes(self, role: str, route: PauseRoute | None = None) -> tuple[str, ...]:
        """The standing grants a question of ``role`` (routed by ``route``) offers
        (``channels.kit.grants``): none where it needs several approvers."""
        spec = self._catalog.role(role)
        if spec is None or self._catalog.required_approvals(role, route) > 1:
            return ()
        return offered_scopes(spec.grants, spec.answered_by)

    def approval_view(self, pause: PauseView) -> ApprovalView:
        """What the message of ``pause`` shows (its real arguments: every renderer masks them)."""
        scopes = self.grant_scopes(pause.role, pause.route)
        return replace(self._approval_view(pause), grant_scopes=scopes)

    def _approval_view(self, pause: PauseView) -> ApprovalView:
        return approval_view(
            pause,
            role_description=self._catalog.role_description(pause.role),
            reads_replies=self._catalog.role_reads_replies(pause.role),
            separates_duties=self._catalog.role_separates_duties(pause.role, pause.route),
            question=self._catalog.question_template(
                pause.ask.tool, agent=pause.agent, role=pause.role
            ),
        )

    async def _settle_note(
        self, question: MessageRef, view: ApprovalView, outcome: Outcome, *, tenant_id: str
    ) -> None:
        """Update the requester's note (if the request has one) with the outcome, before the
        question's references close: a process that dies first leaves them open, and the
        outcome is shown again, note and all (an update is the same made twice), as for the
        question's own message. Owed (the outbox) only when Slack fails it, or after the note
        itself when that is still owed. Whether it has a note is kept on the question's
        reference (``noted``): nothing is read for a question without one."""
        if question.noted is False:
            return
        rendered = settled_note(view, outcome)
        await self.outbox.settle_note(
            question.pause_id, text=rendered.text, blocks=rendered.blocks, tenant_id=tenant_id
        )

    async def _nudge_in_thread(
        self, question: MessageRef, nudge_key: str, text: str, *, retried: bool
    ) -> None:
        """Post a nudge's ``text`` in the question's thread, marked with its key; a resend
        that finds its mark there posts nothing."""
        mark = nudge_mark(question, nudge_key)
        channel, thread = question.channel_id, question.thread
        if retried and await find_marked(self.client, mark, channel=channel, thread_ts=thread):
            return
        await self.say_in_thread(
            channel,
            thread,
            text,
            metadata=mark,
            pause_id=question.pause_id,
            tenant_id=question.tenant_id,
            moot_when_closed=True,  # a reminder of a question that closed: not said
        )

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
        """Post a run's end in its thread, marked with the run (``end_mark``), owed until
        Slack took it (the outbox), looked for first when told again (``retried``): said once.
        Raises ``ChannelUnavailableError`` only when Slack failed and the database could not
        keep it owed: the App keeps the end untold and its sweep tells it again."""
        await self.outbox.post(
            key=key_of("end", run_id),
            channel=channel,
            thread_ts=thread_ts,
            text=redact(text)[:MAX_THREAD_TEXT],
            mark=end_mark(run_id),
            look_first=retried,
        )

    async def say_in_thread(
        self,
        channel: str,
        thread_ts: str,
        text: str,
        *,
        metadata: dict[str, Any] | None = None,
        pause_id: str | None = None,
        tenant_id: str | None = None,
        moot_when_closed: bool = False,
    ) -> None:
        """Post ``text`` (mrkdwn, escaped by the caller) in a thread, owed until Slack took it
        (the outbox; ``metadata``, a nudge's mark, keys it: a nudge sent again is owed once).
        ``moot_when_closed``: not said once ``pause_id``'s question closed."""
        key = key_of("line", json.dumps(metadata, sort_keys=True) if metadata else uuid4().hex)
        try:
            await self.outbox.post(
                key=key,
                channel=channel,
                thread_ts=thread_ts,
                text=redact(text)[:MAX_THREAD_TEXT],
                mark=metadata,
                pause_id=pause_id,
                tenant_id=tenant_id,
                moot_when_closed=moot_when_closed,
            )
        except ChannelUnavailableError as error:  # neither Slack nor the database: said never
            log.warning("slack: could not post in thread %s of %s: %s", thread_ts, channel, error)

    async def _delete_quietly(self, ref: MessageRef) -> None:
        try:
            await self.client.chat_delete(channel=ref.channel_id, ts=ref.ts)
        except (SlackApiError, *TRANSPORT_ERRORS) as error:
            log.warning("slack: a duplicate approval message stays: %s", failure_of(error))


def _state(pause: PauseView) -> tuple[PauseStatus, int, int, int]:
    """What a waiting question's message shows of it changes with this."""
    counted = sum(1 for approval in pause.approvals if approval.counted)
    return (pause.status, len(pause.approvals), counted, len(pause.handovers))


def _owes_note(ask: ChannelAsk, ref: MessageRef) -> bool:
    """Whether the requester of ``ask``, asked in the message ``ref``, is told in their own
    thread where it waits (``SlackGateway._post_note``): the work was started in a Slack thread
    other than the one the question is asked in."""
    thread = SlackThread.parse(ask.thread_id)
    return thread is not None and (thread.channel, thread.ts) not in (
        (ref.channel_id, ref.thread_ts),
        (ref.channel_id, ref.ts),
    )


def _route(question: Question) -> PauseRoute | None:
    """Where a policy routed the question (a withdrawal says nothing of it: no buttons)."""
    return None if isinstance(question, ChannelWithdrawal) else question.route


def _needed(catalog: Catalog, question: Question) -> tuple[str, ...]:
    """A question just asked that needs several approvals says how many (with its buttons)."""
    shown = (
        None
        if isinstance(question, ChannelWithdrawal)
        else nobody_yet(catalog.required_approvals(question.role, _route(question)))
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
    if ask.route is not None and ask.route.conversation is not None:
        return ask.route.conversation, None  # where a policy routed it
    if config.conversation is None:
        raise SetupError(
            f"the role {config.role} asks in the owner's Slack thread, and thread "
            f"{ask.thread_id} was not started in Slack: give its channel a conversation"
        )
    return config.conversation, None


def quote(text: str, limit: int = 200) -> str:
    """Outside text shown inside our messages: one line, escaped, cut."""
    return escape(" ".join(text.split()), limit)
