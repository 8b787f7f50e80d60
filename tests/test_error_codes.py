"""Every error's code and branch are a contract: one row per error class, and no class without one.

A new ``CountersignError`` anywhere in ``bot``, ``channels`` or ``interpreters`` fails
``test_every_error_class_has_a_row`` until its code and branch are pinned here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from typing import NamedTuple

import pytest

import bot
import channels
import interpreters
from bot import (
    AnswerRefusedError,
    CountersignError,
    ExecutionFailedError,
    StorageError,
    UsageError,
)

BRANCHES = (UsageError, AnswerRefusedError, ExecutionFailedError, StorageError)


class Row(NamedTuple):
    home: str  # the module it is imported from (its public home when it has one)
    name: str
    code: str
    branch: type[CountersignError] | None  # None for the base and the branches themselves


ROWS = (
    Row("bot", "CountersignError", "countersign.error", None),
    # misuse: the program's code or configuration has to change
    Row("bot", "UsageError", "usage.invalid", None),
    Row("bot", "AssemblyError", "assembly.invalid", UsageError),
    Row("bot", "SetupError", "setup.invalid", UsageError),
    Row("bot", "SettingsError", "settings.invalid", UsageError),
    Row("bot", "AppClosedError", "app.closed", UsageError),
    Row("bot", "UnknownThreadError", "thread.unknown", UsageError),
    Row("bot.models", "ModelUnservedError", "model.unserved", UsageError),
    Row("channels.slack.render", "RenderError", "slack.render", UsageError),
    # refused answers: nothing recorded, the pause as it was
    Row("bot", "AnswerRefusedError", "answer.refused", None),
    Row("bot", "UnknownPauseError", "pause.unknown", AnswerRefusedError),
    Row("bot", "NotPausedError", "run.not-paused", AnswerRefusedError),
    Row("bot", "PauseAnswererError", "pause.wrong-answerer", AnswerRefusedError),
    Row("bot", "SelfApprovalError", "pause.self-approval", AnswerRefusedError),
    Row("bot", "ThreadOwnerError", "pause.not-thread-owner", AnswerRefusedError),
    Row("bot", "AlreadyApprovedError", "pause.already-approved", AnswerRefusedError),
    Row("bot", "ProposalChangedError", "pause.proposal-changed", AnswerRefusedError),
    Row("bot", "DtoValidationError", "dto.invalid", AnswerRefusedError),
    Row("bot", "UninterpretableReplyError", "pause.uninterpretable-reply", AnswerRefusedError),
    Row("bot", "ReplyInterpreterMissingError", "pause.no-reply-interpreter", AnswerRefusedError),
    Row("bot", "GrantRefusedError", "grant.refused", AnswerRefusedError),
    Row("bot", "UnknownGrantError", "grant.unknown", AnswerRefusedError),
    # execution failures: the execution records them
    Row("bot", "ExecutionFailedError", "execution.failed", None),
    Row("bot", "StepFailedError", "step.failed", ExecutionFailedError),
    Row("bot", "AgentFailedError", "agent.failed", ExecutionFailedError),
    Row("bot", "BudgetExceededError", "budget.exceeded", ExecutionFailedError),
    Row("bot", "PiiRefusedError", "pii.refused", ExecutionFailedError),
    Row("bot", "PauseExpiredError", "pause.expired", ExecutionFailedError),
    Row("bot", "ToolError", "tool.error", ExecutionFailedError),
    Row("bot.models", "DecisionModelError", "model.undecided", ExecutionFailedError),
    # storage: an operator's remedy or a retry
    Row("bot", "StorageError", "storage.failed", None),
    Row("bot.security", "UnknownKeyError", "crypto.unknown-key", StorageError),
    Row("bot.security", "DecryptionError", "crypto.undecryptable", StorageError),
    Row("bot.security", "ReencryptError", "crypto.reencrypt-stopped", StorageError),
    Row("channels.slack.store", "SeenEventsBusyError", "slack.events-busy", StorageError),
    Row("bot.core.errors", "RunInterruptedError", "run.interrupted", StorageError),
    Row("bot.core.errors", "ChannelUnavailableError", "channel.unavailable", StorageError),
)


def _class(row: Row) -> type[CountersignError]:
    value = getattr(importlib.import_module(row.home), row.name)
    assert isinstance(value, type) and issubclass(value, CountersignError), row.name
    return value


def _subclasses(cls: type[CountersignError]) -> Iterator[type[CountersignError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _defined_errors() -> set[type[CountersignError]]:
    """Every CountersignError subclass our packages define (every module imported first)."""
    for package in (bot, channels, interpreters):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(module.name)
    ours = ("bot.", "channels.", "interpreters.")
    return {cls for cls in _subclasses(CountersignError) if cls.__module__.startswith(ours)}


def test_every_error_class_has_a_row() -> None:
    pinned = {_class(row) for row in ROWS}
    assert len(pinned) == len(ROWS)
    assert pinned == _defined_errors() | {CountersignError}


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_code_and_branch(row: Row) -> None:
    cls = _class(row)
    assert cls.code == row.code
    branches = [branch for branch in BRANCHES if issubclass(cls, branch)]
    if row.branch is None:
        assert cls is CountersignError or cls in BRANCHES
    else:
        assert branches == [row.branch]


def test_codes_are_unique() -> None:
    codes = [row.code for row in ROWS]
    assert len(set(codes)) == len(codes)


def test_the_subclass_relations_callers_rely_on() -> None:
    assert issubclass(bot.AgentFailedError, bot.StepFailedError)
    assert issubclass(bot.SelfApprovalError, bot.PauseAnswererError)
    assert issubclass(bot.models.ModelUnservedError, LookupError)
    assert issubclass(bot.models.DecisionModelError, ValueError)


def test_every_error_exported_from_bot_has_a_row() -> None:
    exported = {
        name
        for name in bot.__all__
        if isinstance(value := getattr(bot, name), type) and issubclass(value, CountersignError)
    }
    assert exported == {row.name for row in ROWS if row.home == "bot"}


def test_the_attributes_errors_carry() -> None:
    cause = ValueError("bad")
    with pytest.raises(bot.UninterpretableReplyError) as caught:
        raise bot.UninterpretableReplyError("no verdict") from cause
    assert caught.value.reason == "no verdict"
    assert caught.value.__cause__ is cause
    assert str(caught.value) == (
        "[pause.uninterpretable-reply] the reply could not be read as an answer: no verdict"
    )
    failed = bot.AgentFailedError("boom", agent="refund-agent", execution_id="e1")
    assert (failed.agent, failed.execution_id, failed.message) == ("refund-agent", "e1", "boom")
    violation = bot.AssemblyViolation(rule="name.kind-suffix", component="x", message="m")
    assembly = bot.AssemblyError([violation])
    assert assembly.violations == (violation,)
    assert assembly.rules == ["name.kind-suffix"]
