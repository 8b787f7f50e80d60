"""The test kit: a clock you move, scripted models, mocks and channels that decide at once."""

from bot.runtime.auto_channels import AutoApproveChannel, AutoRejectChannel
from bot.testing.clock import FakeClock
from bot.testing.instances import test_with
from bot.testing.llm import (
    ScriptedChatModel,
    call_tool,
    decide_with,
    mock_llm,
    reply_with,
)
from bot.testing.mocks import mock_of
from channels.terminal import TerminalOutput, TerminalUserChannel

__all__ = [
    "AutoApproveChannel",
    "AutoRejectChannel",
    "FakeClock",
    "ScriptedChatModel",
    "TerminalOutput",
    "TerminalUserChannel",
    "call_tool",
    "decide_with",
    "mock_llm",
    "mock_of",
    "reply_with",
    "test_with",
]
