"""Handing a question on from Slack ("Reassign…" on its message): the approver picks a person
in a modal, who may answer it from then on (``App.reassign``), is told in a direct message, and
the message says who it was handed to. Whoever could answer still may."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.app import App
from bot.core.errors import CountersignError
from bot.core.results import PauseView
from channels.kit.texts import handed_on, handed_to_you
from channels.slack.answering import Answerer, Answering
from channels.slack.approvals import show_approvals
from channels.slack.feedback import Feedback
from channels.slack.gateway import SlackGateway
from channels.slack.redaction import log
from channels.slack.render import escape, mention
from channels.slack.render_approvals import REASSIGN_BLOCK
from channels.slack.signing import ModalMetadata
from channels.slack.tenant_tokens import speaking_for
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of

AfterHandover = Callable[[], Coroutine[Any, Any, None]]


class SlackHanding:
    def __init__(
        self, *, app: App, gateway: SlackGateway, answering: Answering, feedback: Feedback
    ) -> None:
        self._app = app
        self._gateway = gateway
        self._answering = answering
        self._feedback = feedback

    async def reassign(
        self, metadata: ModalMetadata, who: Answerer, to: str | None
    ) -> dict[str, str] | AfterHandover:
        """Before the ack: hand the question to ``to``; the modal's errors (it stays open,
        nothing changed) or what follows the ack (telling them, updating the message)."""
        if not to:
            return {REASSIGN_BLOCK: "Choose the person to hand it to."}

        async def may_answer(pause: PauseView) -> str | None:
            return await self._answering.refusal(pause, who)

        try:
            pause = await self._app.reassign(
                metadata.pause_id,
                tenant_id=who.tenant_id,
                by=who.user,
                to=to,
                may_answer=may_answer,
            )
        except CountersignError as error:
            return {REASSIGN_BLOCK: escape(error.message, 150)}

        async def after() -> None:
            title = self._gateway.approval_view(pause).title
            with speaking_for(pause.tenant_id):
                try:
                    await self._gateway.client.chat_postMessage(
                        channel=to, text=handed_to_you(mention(who.user), escape(title, 300))
                    )
                except (SlackApiError, *TRANSPORT_ERRORS) as error:
                    log.warning(
                        "slack: the person handed a question was not told: %s", failure_of(error)
                    )
            await self._feedback.tell(who.audience, handed_on(mention(who.user), mention(to)) + ".")
            await show_approvals(self._app, self._gateway, pause)

        return after
