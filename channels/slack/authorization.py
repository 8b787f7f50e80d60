"""Who may answer a pause from Slack, checked after the ack, before anything is resumed.

The kit's rules (``channels.kit.answerers``): a CHANNEL pause, the approvers of its Slack
channel (users, or members of user groups), and once it is escalated its ``escalate_to``
approvers too; a THREAD_OWNER pause, the thread's owner (the runtime checks it again).
Anybody else is refused; the refusal is counted and logged with the Slack user, never the pause.
When it hangs on a user group Slack could not list for now (an outage), the person is told to try
again (``APPROVERS_NOT_CHECKED``): nothing is recorded, and the answer path never fails for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.core.results import PauseView
from bot.runtime.answers import AnswerCheck
from channels.kit.answerers import refusal
from channels.kit.texts import APPROVERS_NOT_CHECKED
from channels.slack.approvers import ApproverDirectory, MembersUnknownError
from channels.slack.workspaces import WorkspaceConfigs


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """Why a user may not answer; ``text`` is what they are told."""

    text: str


class Authorizer:
    def __init__(self, workspaces: WorkspaceConfigs, directory: ApproverDirectory) -> None:
        self._workspaces = workspaces
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
        # as the pause's own workspace set it: another's approvers never answer it
        channel = await self._workspaces.implementation(pause.tenant_id, pause.channel)

        async def among(approvers: Sequence[str]) -> bool:
            return await self._directory.is_among(user, approvers)

        config = None if channel is None else channel.config
        try:
            words = await refusal(pause, user, config, among=among)
        except MembersUnknownError:
            return Refusal(text=APPROVERS_NOT_CHECKED)
        return None if words is None else Refusal(text=words)
