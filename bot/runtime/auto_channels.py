"""Channels that decide at once: named on a tool, its calls never pause (tests, trusted tools)."""

from __future__ import annotations

from bot.components.decorators import channel
from bot.core.channel import ChannelAsk, ChannelOf, ChannelOutcome, Decided
from bot.core.dtos import ToolCallApprovalDecision


@channel(name="auto-approve-channel", description="Approves every call at once")
class AutoApproveChannel(ChannelOf):
    async def send(self, ask: ChannelAsk) -> Decided:
        return ChannelOutcome.decided(ToolCallApprovalDecision(approved=True))


@channel(name="auto-reject-channel", description="Rejects every call at once")
class AutoRejectChannel(ChannelOf):
    async def send(self, ask: ChannelAsk) -> Decided:
        return ChannelOutcome.decided(
            ToolCallApprovalDecision(approved=False, reason="rejected automatically")
        )
