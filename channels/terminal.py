"""A channel that asks in the terminal: prints the question; the answer comes through ``resume``.

Named on a tool as is, its pauses are answered by the thread's owner (the person at the prompt).
It prints the kit's question view (``channels.kit.question``), as Slack and the web show it:
the question, who asked and why, the values titled and formatted, ``Sensitive`` ones masked,
the answers it takes, when it expires. Given the App (``TerminalOutput.read_assembly``), the
title is the tool's question and the role is named as a person reads it.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

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
from channels.kit.catalog import KitCatalog
from channels.kit.outcomes import closed_resolution, words_of
from channels.kit.question import QuestionView, left, question_view, title_of, when


class TerminalOutput:
    """Where the terminal channel writes (a service; tests provide their own stream)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self._catalog: KitCatalog[Any] | None = None
        self._app: App | None = None

    def read_assembly(self, app: App) -> None:
        """Read questions' templates, descriptions and roles from ``app`` (once it is made)."""
        self._catalog = KitCatalog(app, lambda cls: None)
        self._app = app

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
    if q.expires_at is not None:
        lines.append(f"  Expires {when(q.expires_at)} ({left(q.time_left)}) if nobody answers.")
    return lines


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
