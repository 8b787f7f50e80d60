"""Who may answer a pause from Slack, checked after the ack, before anything is resumed.

A CHANNEL pause: the approvers of its Slack channel (users, or members of user groups), and
once it is escalated its ``escalate_to`` approvers too (the first answer from either wins). A
THREAD_OWNER pause: the thread's owner (the runtime checks it again: ``ThreadOwnerError``).
Anybody else is refused; the refusal is counted and logged with the Slack user, never the pause.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from bot.core.enums import PauseAnswerer
from bot.core.results import PauseView
from bot.runtime.answers import AnswerCheck
from channels.slack.approvers import ApproverDirectory
from channels.slack.catalog import Catalog
from channels.slack.feedback import NOT_AN_APPROVER, NOT_THE_OWNER


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """Why a user may not answer; ``text`` is what they are told."""

    text: str


class Authorizer:
    def __init__(self, catalog: Catalog, directory: ApproverDirectory) -> None:
        self._catalog = catalog
        self._directory = directory

    async def check(self, pause: PauseView, *, user: str, team: str | None) -> Refusal | None:
        """``None`` when ``user`` may answer ``pause``; else the refusal (the runtime counts and
        logs it with the answer's outcome: ``bot.runtime.observed_answers``)."""
        return await self._refusal(pause, user)

    def rule_for(self, *, user: str, team: str | None) -> AnswerCheck:
        """Slack's own rule of who may answer, for ``App.answer(..., may_answer=...)``: the words
        of a refusal for ``user``, or ``None``."""

        async def may_answer(pause: PauseView) -> str | None:
            refusal = await self.check(pause, user=user, team=team)
            return None if refusal is None else refusal.text

        return may_answer

    async def may_answer(self, pause: PauseView, user: str) -> bool:
        return await self._refusal(pause, user) is None

    async def _refusal(self, pause: PauseView, user: str) -> Refusal | None:
        match pause.answered_by:
            case PauseAnswerer.THREAD_OWNER:
                return None if user == pause.owner_id else Refusal(text=NOT_THE_OWNER)
            case PauseAnswerer.CHANNEL:
                channel = self._catalog.slack_channel(pause.channel)
                if channel is None:
                    return Refusal(text=NOT_AN_APPROVER)
                approvers = channel.config.approvers
                if pause.escalated:  # its escalation approvers may answer too
                    approvers = approvers + channel.config.escalate_to
                if await self._directory.may_answer(user, approvers):
                    return None
                return Refusal(text=NOT_AN_APPROVER)
            case _:
                assert_never(pause.answered_by)
