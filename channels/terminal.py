"""A channel that asks in the terminal: prints the question; the answer comes through ``resume``.

Named on a tool as is, its pauses are answered by the thread's owner (the person at the prompt).
What it prints is what a person reads anywhere else: ``Sensitive`` fields masked.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from bot.components.decorators import channel
from bot.core.channel import (
    AwaitReply,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    ChannelReminder,
    ChannelWithdrawal,
)


class TerminalOutput:
    """Where the terminal channel writes (a service; tests provide their own stream)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()


@channel(
    name="terminal-user-channel",
    description="Asks the person at the terminal",
    deps=[TerminalOutput],
)
class TerminalUserChannel(ChannelOf):
    def __init__(self, output: TerminalOutput) -> None:
        self._output = output

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        arguments = json.dumps(ask.shown_arguments, ensure_ascii=False)  # Sensitive: masked
        self._output.write(f"? {ask.value.tool} wants to run with {arguments}")
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
        self._output.write(f"- {withdrawal.value.tool}: no longer needed ({withdrawal.resolution})")

    async def remind(self, reminder: ChannelReminder) -> None:
        expiry = reminder.expires_at
        until = "" if expiry is None else f", expires {expiry:%Y-%m-%d %H:%M %Z}"
        self._output.write(
            f"! {reminder.value.tool} still waits for your answer "
            f"(reminder {reminder.reminded + 1}{until})"
        )
