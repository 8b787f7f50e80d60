"""The test kit: a clock you move, scripted models, mocks, channels that decide at once, and an
inspector of a running App (its store, model-call ledger and runtime)."""

from bot.runtime.auto_channels import AutoApproveChannel, AutoRejectChannel
from bot.testing.clock import FakeClock
from bot.testing.inspect import AppInspector, AroundPass, inspect_app
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
    "AppInspector",
    "AroundPass",
    "AutoApproveChannel",
    "AutoRejectChannel",
    "FakeClock",
    "ScriptedChatModel",
    "TerminalOutput",
    "TerminalUserChannel",
    "call_tool",
    "decide_with",
    "inspect_app",
    "mock_llm",
    "mock_of",
    "reply_with",
    "test_with",
]
