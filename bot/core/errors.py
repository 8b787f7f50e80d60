"""The error tree of Countersign.

Every error has a stable ``code``. Misuse found at assembly (``AssemblyError``) is one branch,
runtime failures another (the split of pydantic-ai's ``UserError`` / ``AgentRunError``).
Messages name the ids involved and what to do next, but never a pause id: the pause id is the
right to answer and must not leak through logs or error reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class CountersignError(Exception):
    """Base of every error the runtime raises on purpose."""

    code: str = "countersign.error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


# --------------------------------------------------------------------------------------------
# Assembly: the application is wired wrongly; found by App.create, all at once.


@dataclass(frozen=True, slots=True, kw_only=True)
class AssemblyViolation:
    """One broken assembly rule: ``rule`` is the bracketed code, e.g. ``name.kind-suffix``."""

    rule: str
    component: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.component}: {self.message}"


class AssemblyError(CountersignError):
    """The application breaks one or more assembly rules; ``violations`` lists every one."""

    code = "assembly.invalid"

    def __init__(self, violations: Sequence[AssemblyViolation]) -> None:
        self.violations: tuple[AssemblyViolation, ...] = tuple(violations)
        lines = "\n".join(f"  - {v}" for v in self.violations)
        super().__init__(f"the application is not assembled correctly:\n{lines}")

    @property
    def rules(self) -> list[str]:
        return [v.rule for v in self.violations]


class SetupError(CountersignError):
    """A test kit or API misuse that is not an assembly rule (e.g. mock_llm of a code component)."""

    code = "setup.invalid"


class SettingsError(CountersignError):
    """A missing or malformed setting; the message names the setting."""

    code = "settings.invalid"


# --------------------------------------------------------------------------------------------
# Answering a pause.


class UnknownPauseError(CountersignError):
    """No pause with this id for this tenant (also for another tenant's id: no hint is given)."""

    code = "pause.unknown"

    def __init__(self, message: str = "no pause with that id is known for this tenant") -> None:
        super().__init__(message)


class NotPausedError(CountersignError):
    """The pause was already answered, withdrawn or cancelled."""

    code = "run.not-paused"


class PauseAnswererError(CountersignError):
    """The wrong kind of credential for this pause (owner_id for a CHANNEL pause or vice versa)."""

    code = "pause.wrong-answerer"


class SelfApprovalError(PauseAnswererError):
    """The execution's owner answered a pause of a role with separation of duties: a person
    may not approve their own request. The pause keeps waiting for someone else."""

    code = "pause.self-approval"


class ThreadOwnerError(CountersignError):
    """A THREAD_OWNER pause answered by someone who does not own the thread."""

    code = "pause.not-thread-owner"


class DtoValidationError(CountersignError):
    """A decision, a resume request or a DTO is invalid; nothing was recorded."""

    code = "dto.invalid"


class UninterpretableReplyError(CountersignError):
    """A free-text reply could not be read as a valid answer; the pause stays pending."""

    code = "pause.uninterpretable-reply"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"the reply could not be read as an answer: {reason}")


class ReplyInterpreterMissingError(CountersignError):
    """A reply was given for a role that has no reply interpreter; the pause is untouched."""

    code = "pause.no-reply-interpreter"


class BudgetExceededError(CountersignError):
    """A budget is exhausted; the model was not called."""

    code = "budget.exceeded"


class PiiRefusedError(CountersignError):
    """A PII policy blocks what would be sent to a model."""

    code = "pii.refused"


class UnknownThreadError(CountersignError):
    """No execution is known for this thread and tenant."""

    code = "thread.unknown"


class AppClosedError(CountersignError):
    """The App was closed; create a new one."""

    code = "app.closed"


# --------------------------------------------------------------------------------------------
# Execution failures.


class ToolError(CountersignError):
    """Raised by a tool for a failure the model should read and may work around.

    Any other exception a tool raises fails the agent's step (``AgentFailedError``, the
    exception as cause): a side effect that failed is not silently retried by the model.
    """

    code = "tool.error"


class StepFailedError(CountersignError):
    """A step of an execution failed; the original error is ``__cause__``."""

    code = "step.failed"

    def __init__(self, message: str, *, execution_id: str | None = None) -> None:
        self.execution_id = execution_id
        super().__init__(message)


class AgentFailedError(StepFailedError):
    """An agent's step failed (its channel's send threw, its model failed, a decision was bad)."""

    code = "agent.failed"

    def __init__(self, message: str, *, agent: str, execution_id: str | None = None) -> None:
        self.agent = agent
        super().__init__(message, execution_id=execution_id)
