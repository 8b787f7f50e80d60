"""A channel that asks in the terminal: prints the question; the answer comes through ``resume``.

Named on a tool as is, its pauses are answered by the thread's owner (the person at the prompt).
It prints the kit's question view (``channels.kit.question``), as Slack and the web show it:
the question, who asked and why, the values titled and formatted, ``Sensitive`` ones masked,
the answers it takes, when it expires. Given the App (``TerminalOutput.read_assembly``), the
title is the tool's question and the role is named as a person reads it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Final, TextIO

from bot.app import App
from bot.components.decorators import channel
from bot.core.channel import (
    AwaitReply,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
)
from bot.core.enums import PauseAnswerer
from bot.core.results import ExecutionResumeEvent
from channels.kit.catalog import KitCatalog
from channels.kit.outcomes import closed_resolution, words_of
from channels.kit.question import QuestionView, left, one_line, question_view, title_of, when
from channels.kit.texts import handed_on


class TerminalOutput:
    """Where the terminal channel writes (a service; tests provide their own stream)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self._catalog: KitCatalog[Any] | None = None
        self._app: App | None = None

    def read_assembly(self, app: App) -> None:
        """Read questions' templates, descriptions and roles from ``app`` (once it is made), and
        print how each question asked here ended (``App.on_execution_resume``)."""
        self._catalog = KitCatalog(app, _terminal_implementation)
        self._app = app
        app.on_execution_resume(self._answered)

    def _answered(self, event: ExecutionResumeEvent) -> None:
        """An outcome line for each question of this channel the move answered: how, what an
        edit changed, what ran."""
        catalog = self._catalog
        for pause in event.answered:
            if catalog is None or catalog.implementation(pause.channel) is None:
                continue
            for line in outcome_lines(question_view(pause, catalog, now=None)):
                self.write(line)

    def write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def view(self, ask: ChannelAsk) -> QuestionView:
        now = None if self._app is None else self._app.clock.now()
        return question_view(ask, self._catalog, now=now)

    def title(self, question: ChannelWithdrawal | ChannelReminder) -> str:
        """The question's title, for a line about it (a reminder, a withdrawal)."""
        return title_of(question.value, self._catalog, agent=question.agent, role=question.role)


def question_lines(q: QuestionView) -> list[str]:
    """The question as the terminal prints it: one line each, the values indented."""
    who = f"  Asked by {q.requester}" if q.requester else "  Asked"
    lines = [f"? {q.title}", f"{who} through {q.agent}" if q.agent else who]
    if q.context():
        lines.append(f"  {q.context()}")
    lines += [f"  {f.title}: {' '.join(f.value.split())}" for f in q.fields]
    lines.append(f"  Answers: {', '.join(q.offers.decisions) or 'none'}")
    if q.approvals is not None:  # a question that needs several approvals
        lines += [f"  {c.title}: {c.was} → {c.now}" for c in q.changes]
        lines += [f"  {line}" for line in q.approvals.lines()]
    lines += [f"  {handed_on(h.by, h.to)}" for h in q.handed if h.kind == "reassigned"]
    if q.expires_at is not None:
        lines.append(f"  Expires {when(q.expires_at)} ({left(q.time_left)}) if nobody answers.")
    return lines


def outcome_lines(q: QuestionView) -> list[str]:
    """How a question ended, as the terminal prints it: ``= Approved with changes by you.``"""
    words = q.words
    if words is None:
        return []
    lines = [f"= {words.sentence(lambda who: who)} {q.title}"]
    lines += [f"  {c.title}: {c.was} → {c.now}" for c in q.changes]
    if q.ran_with:
        lines.append(f"  What ran: {one_line(q.ran_with)}")
    return lines


def _terminal_implementation(cls: type) -> TerminalImplementation | None:
    """The catalog's config of a terminal implementation: every class built on this channel."""
    return TERMINAL if issubclass(cls, TerminalUserChannel) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalImplementation:
    """The terminal's implementation of a role: its owner answers, at the prompt."""

    role: str = ""
    answered_by: PauseAnswerer = PauseAnswerer.THREAD_OWNER
    approvers: tuple[str, ...] = ()
    escalate_to: tuple[str, ...] = ()


TERMINAL: Final = TerminalImplementation()


@channel(
    name="terminal-user-channel",
    description="Asks the person at the terminal",
    deps=[TerminalOutput],
)
class TerminalUserChannel(ChannelOf):
    def __init__(self, output: TerminalOutput) -> None:
        self._output = output

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        for line in question_lines(self._output.view(ask)):
            self._output.write(line)
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
        said = words_of(closed_resolution(withdrawal.resolution)).sentence()
        self._output.write(f"- {said} {self._output.title(withdrawal)}")

    async def remind(self, reminder: ChannelReminder) -> None:
        expiry = reminder.expires_at
        until = "" if expiry is None else f", expires {when(expiry)}"
        self._output.write(
            f"! Still waiting for your answer (reminder {reminder.reminded + 1}{until}): "
            f"{self._output.title(reminder)}"
        )
