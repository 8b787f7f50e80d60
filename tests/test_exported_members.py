"""The public API is a contract: exactly these names are exported, and each one resolves.

An equality, not a superset: a name added to ``bot.__all__`` (or the test kit's, or the
interpreters') without being pinned here fails, so every addition is a decision.
"""

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
"""DESIGN.md's import list and error list."""

AS_BUILT = {
    # errors: the base, the four branches, and the rest of the tree (tests/test_error_codes.py)
    "CountersignError", "UsageError", "AnswerRefusedError", "ExecutionFailedError",
    "StorageError", "AppClosedError", "AssemblyViolation", "SelfApprovalError", "SettingsError",
    "SetupError", "ToolError", "UnknownThreadError",
    # channels and answers
    "AwaitReply", "Decided", "ToolCallApprovalAsk", "ReceivedReply", "RecordedAnswer",
    "AnswerOutcome", "Answered", "ReplyKept", "NotUnderstood", "AlreadyClosed", "Refused",
    # several approvals of one question (required_approvals)
    "ApprovalCounted", "Approval", "AlreadyApprovedError", "ProposalChangedError",
    # handing questions on (App.reassign, App.delegate)
    "Delegation", "DelegationChange", "Handover",
    # time on a question
    "PauseTiming", "OnExpiry", "PauseExpiredError", "ChannelReminder", "ChannelEscalation",
    # context, results and records
    "StepContext", "Tenant", "ExecutionResult", "ExecutionRecord", "ChildExecutionRecord",
    "StepRecord", "PauseAuditEntry", "PauseView", "PendingPause", "ExecutionPauseEvent",
    "ExecutionResumeEvent", "ExecutionFailure",
    # flows
    "JoinFailure", "join_all", "join_fail_fast", "join_quorum_groups",
    # budgets
    "Budget", "ModelPrice", "Spend",
    # PII and sensitive fields
    "Sensitive", "SensitiveFields", "PiiPolicy", "PiiAction", "PiiDetector", "PiiMatch",
    "CardNumberDetector", "EmailDetector", "PhoneDetector", "RegexDetector", "allow_unmasked",
    "block_with_refusal", "replace_with_token",
    # settings
    "Settings", "load_settings",
    # a role's rule for a rejection's reason
    "RejectReason",
    # your own graph, served (bot.served)
    "ServedGraph", "serve_graph",
    # approval policies (issue 28)
    "policy", "PolicyAsk", "PolicyOutcome", "PolicyDecision", "AskPerson", "ApproveAtOnce",
    "RejectAtOnce", "ChannelAutoDecision", "approve_below", "allow_requesters", "allow_tenants",
    "within_hours", "all_of", "first_of",
    # standing grants (issue 28)
    "Grant", "GrantScope", "GrantScopeKind", "ArgumentConstraint", "GrantRefusedError",
    "UnknownGrantError",
    # a policy's route (issue 28)
    "RouteTo", "PauseRoute",
}  # fmt: skip
"""Added since (the README documents each)."""

TEST_KIT = {
    "FakeClock", "mock_llm", "mock_of", "test_with", "reply_with", "decide_with", "call_tool",
    "AutoApproveChannel", "AutoRejectChannel", "ScriptedChatModel", "TerminalOutput",
    "TerminalUserChannel", "inspect_app", "AppInspector", "AroundPass",
}  # fmt: skip

INTERPRETERS = {"KeywordReplyInterpreter", "ButtonValueReplyInterpreter"}


def test_exactly_the_pinned_names_are_exported_from_bot() -> None:
    assert not CONTRACT & AS_BUILT
    assert set(bot.__all__) == CONTRACT | AS_BUILT


def test_every_exported_name_resolves() -> None:
    for name in bot.__all__:
        assert getattr(bot, name) is not None, name


def test_all_is_sorted_without_duplicates() -> None:
    assert bot.__all__ == sorted(bot.__all__)
    assert len(set(bot.__all__)) == len(bot.__all__)


def test_the_test_kit_and_interpreters() -> None:
    assert set(bot.testing.__all__) == TEST_KIT
    assert set(interpreters.__all__) == INTERPRETERS
    for name in bot.testing.__all__:
        assert getattr(bot.testing, name) is not None, name
    for name in interpreters.__all__:
        assert getattr(interpreters, name) is not None, name
