"""Countersign: people countersign what AI agents are about to do.

The public API (a contract: names are added, never removed). The test kit is ``bot.testing``.
"""

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
from bot.core.enums import DecidedBy, ExecutionStatus, PauseAnswerer, PauseResolution, PauseStatus
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
    SettingsError,
    SetupError,
    StepFailedError,
    ThreadOwnerError,
    UninterpretableReplyError,
    UnknownPauseError,
    UnknownThreadError,
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
    StepRecord,
)
from bot.core.sensitive import Sensitive
from bot.runtime.auto_channels import AutoApproveChannel, AutoRejectChannel
from bot.settings import Settings, load_settings

__all__ = [
    "AgentFailedError",
    "App",
    "AppClosedError",
    "AssemblyError",
    "AssemblyViolation",
    "AutoApproveChannel",
    "AutoRejectChannel",
    "AwaitReply",
    "BudgetExceededError",
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
    "ExecutionContext",
    "ExecutionPauseEvent",
    "ExecutionRecord",
    "ExecutionResult",
    "ExecutionResumeEvent",
    "ExecutionStatus",
    "NotPausedError",
    "PauseAnswerer",
    "PauseAnswererError",
    "PauseAuditEntry",
    "PauseResolution",
    "PauseStatus",
    "PauseView",
    "PendingPause",
    "PiiRefusedError",
    "ReplyInput",
    "ReplyInterpretation",
    "ReplyInterpreterMissingError",
    "Sensitive",
    "Settings",
    "SettingsError",
    "SetupError",
    "StepContext",
    "StepFailedError",
    "StepRecord",
    "SystemClock",
    "Tenant",
    "ThreadOwnerError",
    "ToolCallApprovalAsk",
    "ToolCallApprovalDecision",
    "UninterpretableReplyError",
    "UnknownPauseError",
    "UnknownThreadError",
    "WorkflowFinishText",
    "WorkflowStartText",
    "agent",
    "application",
    "channel",
    "channel_role",
    "load_settings",
    "reply_interpreter",
    "start",
    "tool",
    "workflow",
    "workflow_finish",
    "workflow_start",
]
