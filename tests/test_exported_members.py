"""The public API is a contract: every name of DESIGN.md's import list stays importable."""

from __future__ import annotations

import bot
import bot.testing
import interpreters

CONTRACT = {
    "App", "agent", "tool", "workflow", "workflow_start", "workflow_finish", "start",
    "application", "channel_role", "channel", "reply_interpreter", "ChannelOf", "ChannelOutcome",
    "ChannelAsk", "ChannelWithdrawal", "ReplyInterpretation", "DecidedBy", "PauseAnswerer",
    "PauseStatus", "PauseResolution", "ExecutionStatus", "ToolCallApprovalDecision",
    "WorkflowStartText", "WorkflowFinishText", "ExecutionContext", "AutoApproveChannel",
    "AutoRejectChannel", "ReplyInput", "UnknownPauseError", "NotPausedError",
    "PauseAnswererError", "ThreadOwnerError", "DtoValidationError", "UninterpretableReplyError",
    "ReplyInterpreterMissingError", "BudgetExceededError", "PiiRefusedError", "AgentFailedError",
    "StepFailedError", "AssemblyError", "Clock", "SystemClock", "join_quorum",
}  # fmt: skip

TEST_KIT = {
    "FakeClock",
    "mock_llm",
    "mock_of",
    "test_with",
    "reply_with",
    "decide_with",
    "call_tool",
    "inspect_app",
}


def test_the_contract_is_exported_from_bot() -> None:
    assert set(bot.__all__) >= CONTRACT
    for name in bot.__all__:
        assert getattr(bot, name) is not None


def test_all_is_sorted_and_complete() -> None:
    assert bot.__all__ == sorted(bot.__all__)
    assert len(set(bot.__all__)) == len(bot.__all__)


def test_error_codes_are_stable() -> None:
    assert bot.UnknownPauseError.code == "pause.unknown"
    assert bot.NotPausedError.code == "run.not-paused"
    assert bot.PauseAnswererError.code == "pause.wrong-answerer"
    assert bot.SelfApprovalError.code == "pause.self-approval"
    assert issubclass(bot.SelfApprovalError, bot.PauseAnswererError)
    assert bot.UninterpretableReplyError.code == "pause.uninterpretable-reply"
    assert bot.ReplyInterpreterMissingError.code == "pause.no-reply-interpreter"


def test_the_test_kit_and_interpreters() -> None:
    assert set(bot.testing.__all__) >= TEST_KIT
    assert {"KeywordReplyInterpreter", "ButtonValueReplyInterpreter"} <= set(interpreters.__all__)
