"""Countersign: people countersign what AI agents are about to do.

The public API (a contract: names are added, never removed). The test kit is ``bot.testing``.

Each name is imported from its module on first use (``_EXPORTED_FROM``; the imports below are
for type checkers): ``python -m bot`` imports this package, and ``--help`` should not wait
for LangChain and LangGraph (2.5-5 s). A name added here goes into all three lists; the test of
the exported members reads every name of ``__all__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.app import App
    from bot.components.decorators import (
        agent,
        application,
        channel,
        channel_role,
        reply_interpreter,
        tool,
        workflow,
        workflow_finish,
        workflow_start,
    )
    from bot.components.flow import start
    from bot.components.joins import (
        JoinFailure,
        join_all,
        join_fail_fast,
        join_quorum,
        join_quorum_groups,
    )
    from bot.core.budget import Budget, ModelPrice, Spend
    from bot.core.channel import (
        AwaitReply,
        ChannelAsk,
        ChannelOf,
        ChannelOutcome,
        ChannelWithdrawal,
        Decided,
    )
    from bot.core.clock import Clock, SystemClock
    from bot.core.context import ExecutionContext, StepContext, Tenant
    from bot.core.dtos import (
        ToolCallApprovalAsk,
        ToolCallApprovalDecision,
        WorkflowFinishText,
        WorkflowStartText,
    )
    from bot.core.enums import (
        DecidedBy,
        ExecutionStatus,
        PauseAnswerer,
        PauseResolution,
        PauseStatus,
    )
    from bot.core.errors import (
        AgentFailedError,
        AppClosedError,
        AssemblyError,
        AssemblyViolation,
        BudgetExceededError,
        CountersignError,
        DtoValidationError,
        NotPausedError,
        PauseAnswererError,
        PiiRefusedError,
        ReplyInterpreterMissingError,
        SelfApprovalError,
        SettingsError,
        SetupError,
        StepFailedError,
        ThreadOwnerError,
        ToolError,
        UninterpretableReplyError,
        UnknownPauseError,
        UnknownThreadError,
    )
    from bot.core.pii import (
        CardNumberDetector,
        EmailDetector,
        PhoneDetector,
        PiiAction,
        PiiDetector,
        PiiMatch,
        PiiPolicy,
        RegexDetector,
        SensitiveFields,
        allow_unmasked,
        block_with_refusal,
        replace_with_token,
    )
    from bot.core.reply import ReplyInput, ReplyInterpretation
    from bot.core.results import (
        ChildExecutionRecord,
        ExecutionPauseEvent,
        ExecutionRecord,
        ExecutionResult,
        ExecutionResumeEvent,
        PauseAuditEntry,
        PauseView,
        PendingPause,
        RecordedAnswer,
        StepRecord,
    )
    from bot.core.sensitive import Sensitive
    from bot.runtime.auto_channels import AutoApproveChannel, AutoRejectChannel
    from bot.settings import Settings, load_settings

_EXPORTED_FROM: dict[str, str] = {
    "AgentFailedError": "bot.core.errors",
    "App": "bot.app",
    "AppClosedError": "bot.core.errors",
    "AssemblyError": "bot.core.errors",
    "AssemblyViolation": "bot.core.errors",
    "AutoApproveChannel": "bot.runtime.auto_channels",
    "AutoRejectChannel": "bot.runtime.auto_channels",
    "AwaitReply": "bot.core.channel",
    "Budget": "bot.core.budget",
    "BudgetExceededError": "bot.core.errors",
    "CardNumberDetector": "bot.core.pii",
    "ChannelAsk": "bot.core.channel",
    "ChannelOf": "bot.core.channel",
    "ChannelOutcome": "bot.core.channel",
    "ChannelWithdrawal": "bot.core.channel",
    "ChildExecutionRecord": "bot.core.results",
    "Clock": "bot.core.clock",
    "CountersignError": "bot.core.errors",
    "Decided": "bot.core.channel",
    "DecidedBy": "bot.core.enums",
    "DtoValidationError": "bot.core.errors",
    "EmailDetector": "bot.core.pii",
    "ExecutionContext": "bot.core.context",
    "ExecutionPauseEvent": "bot.core.results",
    "ExecutionRecord": "bot.core.results",
    "ExecutionResult": "bot.core.results",
    "ExecutionResumeEvent": "bot.core.results",
    "ExecutionStatus": "bot.core.enums",
    "JoinFailure": "bot.components.joins",
    "ModelPrice": "bot.core.budget",
    "NotPausedError": "bot.core.errors",
    "PauseAnswerer": "bot.core.enums",
    "PauseAnswererError": "bot.core.errors",
    "PauseAuditEntry": "bot.core.results",
    "PauseResolution": "bot.core.enums",
    "PauseStatus": "bot.core.enums",
    "PauseView": "bot.core.results",
    "PendingPause": "bot.core.results",
    "RecordedAnswer": "bot.core.results",
    "PhoneDetector": "bot.core.pii",
    "PiiAction": "bot.core.pii",
    "PiiDetector": "bot.core.pii",
    "PiiMatch": "bot.core.pii",
    "PiiPolicy": "bot.core.pii",
    "PiiRefusedError": "bot.core.errors",
    "RegexDetector": "bot.core.pii",
    "ReplyInput": "bot.core.reply",
    "ReplyInterpretation": "bot.core.reply",
    "ReplyInterpreterMissingError": "bot.core.errors",
    "SelfApprovalError": "bot.core.errors",
    "Sensitive": "bot.core.sensitive",
    "SensitiveFields": "bot.core.pii",
    "Settings": "bot.settings",
    "SettingsError": "bot.core.errors",
    "SetupError": "bot.core.errors",
    "Spend": "bot.core.budget",
    "StepContext": "bot.core.context",
    "StepFailedError": "bot.core.errors",
    "StepRecord": "bot.core.results",
    "SystemClock": "bot.core.clock",
    "Tenant": "bot.core.context",
    "ThreadOwnerError": "bot.core.errors",
    "ToolCallApprovalAsk": "bot.core.dtos",
    "ToolCallApprovalDecision": "bot.core.dtos",
    "ToolError": "bot.core.errors",
    "UninterpretableReplyError": "bot.core.errors",
    "UnknownPauseError": "bot.core.errors",
    "UnknownThreadError": "bot.core.errors",
    "WorkflowFinishText": "bot.core.dtos",
    "WorkflowStartText": "bot.core.dtos",
    "agent": "bot.components.decorators",
    "allow_unmasked": "bot.core.pii",
    "application": "bot.components.decorators",
    "block_with_refusal": "bot.core.pii",
    "channel": "bot.components.decorators",
    "channel_role": "bot.components.decorators",
    "join_all": "bot.components.joins",
    "join_fail_fast": "bot.components.joins",
    "join_quorum": "bot.components.joins",
    "join_quorum_groups": "bot.components.joins",
    "load_settings": "bot.settings",
    "replace_with_token": "bot.core.pii",
    "reply_interpreter": "bot.components.decorators",
    "start": "bot.components.flow",
    "tool": "bot.components.decorators",
    "workflow": "bot.components.decorators",
    "workflow_finish": "bot.components.decorators",
    "workflow_start": "bot.components.decorators",
}

__all__ = [
    "AgentFailedError",
    "App",
    "AppClosedError",
    "AssemblyError",
    "AssemblyViolation",
    "AutoApproveChannel",
    "AutoRejectChannel",
    "AwaitReply",
    "Budget",
    "BudgetExceededError",
    "CardNumberDetector",
    "ChannelAsk",
    "ChannelOf",
    "ChannelOutcome",
    "ChannelWithdrawal",
    "ChildExecutionRecord",
    "Clock",
    "CountersignError",
    "Decided",
    "DecidedBy",
    "DtoValidationError",
    "EmailDetector",
    "ExecutionContext",
    "ExecutionPauseEvent",
    "ExecutionRecord",
    "ExecutionResult",
    "ExecutionResumeEvent",
    "ExecutionStatus",
    "JoinFailure",
    "ModelPrice",
    "NotPausedError",
    "PauseAnswerer",
    "PauseAnswererError",
    "PauseAuditEntry",
    "PauseResolution",
    "PauseStatus",
    "PauseView",
    "PendingPause",
    "PhoneDetector",
    "PiiAction",
    "PiiDetector",
    "PiiMatch",
    "PiiPolicy",
    "PiiRefusedError",
    "RecordedAnswer",
    "RegexDetector",
    "ReplyInput",
    "ReplyInterpretation",
    "ReplyInterpreterMissingError",
    "SelfApprovalError",
    "Sensitive",
    "SensitiveFields",
    "Settings",
    "SettingsError",
    "SetupError",
    "Spend",
    "StepContext",
    "StepFailedError",
    "StepRecord",
    "SystemClock",
    "Tenant",
    "ThreadOwnerError",
    "ToolCallApprovalAsk",
    "ToolCallApprovalDecision",
    "ToolError",
    "UninterpretableReplyError",
    "UnknownPauseError",
    "UnknownThreadError",
    "WorkflowFinishText",
    "WorkflowStartText",
    "agent",
    "allow_unmasked",
    "application",
    "block_with_refusal",
    "channel",
    "channel_role",
    "join_all",
    "join_fail_fast",
    "join_quorum",
    "join_quorum_groups",
    "load_settings",
    "replace_with_token",
    "reply_interpreter",
    "start",
    "tool",
    "workflow",
    "workflow_finish",
    "workflow_start",
]


def __getattr__(name: str) -> object:
    """Import a public name's module on first use (``python -m bot --help`` stays fast)."""
    module = _EXPORTED_FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
