"""Why an execution failed, kept with it: ``ExecutionResult.error`` and the execution record's.

A run can fail where no caller waits for it — a sweep closes an expired question with
``OnExpiry.FAIL``, recovery continues a tree after a crash — so the failure is recorded with the
execution (its message sealed at rest like every payload: an exception's message may quote a
tool's arguments) and read back with it, on any instance, after any restart.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.errors import CountersignError, StepFailedError


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionFailure:
    """The error that failed an execution: its stable ``code`` (``"pause.expired"``,
    ``"agent.failed"``, ...) and its message, which names the ids involved (never a pause id)."""

    code: str
    message: str

    @classmethod
    def of(cls, error: BaseException) -> ExecutionFailure:
        """What is kept of ``error``; an error that is not Countersign's is a step's failure
        (``StepFailedError``'s code), as the execution reports it."""
        if isinstance(error, CountersignError):
            return cls(code=error.code, message=error.message)
        return cls(code=StepFailedError.code, message=f"{type(error).__name__}: {error}")

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"
