"""The terminal channel prints a reminder of a question still waiting."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

from bot import ChannelReminder
from bot.core.dtos import ToolCallApprovalAsk
from channels.terminal import TerminalOutput, TerminalUserChannel

ASKED = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


async def test_the_terminal_prints_reminders_with_the_expiry() -> None:
    stream = io.StringIO()
    terminal = TerminalUserChannel(TerminalOutput(stream))
    ask = ToolCallApprovalAsk(tool="refund-card-tool", arguments={"amount": 3}, call_id="c1")
    for reminded, expires_at in ((0, ASKED + timedelta(hours=24)), (1, None)):
        await terminal.remind(
            ChannelReminder(
                pause_id="p" * 32,
                value=ask,
                role="terminal-user-channel",
                reminded=reminded,
                asked_at=ASKED,
                expires_at=expires_at,
            )
        )
    assert stream.getvalue().splitlines() == [
        "! Still waiting for your answer (reminder 1, expires 2026-03-02 09:00 UTC): "
        "Approve refund card?",
        "! Still waiting for your answer (reminder 2): Approve refund card?",
    ]
