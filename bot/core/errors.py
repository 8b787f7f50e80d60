"""The error tree of Countersign.

Every error has a stable ``code``. Under ``CountersignError``, four branches say who acts on an
error (pydantic-ai's split of ``UserError`` from ``AgentRunError``, one step finer):

- ``UsageError``: the program uses Countersign wrongly; the fix is in its code or its
  configuration, and the same call fails again. ``AssemblyError`` (every broken rule at once,
  from ``App.create``), ``SetupError``, ``SettingsError``, ``AppClosedError``, and
  ``UnknownThreadError`` (thread ids come from the program, never from a person). Elsewhere:
  ``bot.models.ModelUnservedError`` (the assembly rule ``[model.unserved]`` met at run time)
  and ``channels.slack.RenderError`` (what the application asks to show breaks Block Kit's
  limits even truncated: the tool's input model has to change).
- ``AnswerRefusedError``: an answer to a pause (a click, a reply, ``resume``) was refused;
  nothing was recorded and the pause is as it was, so a channel tells the person who answered.
  ``UnknownPauseError``, ``NotPausedError``, ``PauseAnswererError`` (and ``SelfApprovalError``
  under it), ``ThreadOwnerError``, ``UninterpretableReplyError``,
  ``ReplyInterpreterMissingError``, and ``DtoValidationError``: a decision or an edit that does
  not validate is the commonest refused answer (``execute`` refuses an input that does not
  validate with it too: a value from outside, refused before anything is recorded).
- ``ExecutionFailedError``: an execution's work failed at run time and the execution records
  it. ``StepFailedError`` (and ``AgentFailedError`` and ``PauseExpiredError`` under it),
  ``BudgetExceededError``,
  ``PiiRefusedError``, ``ToolError`` (a tool's failure for the model to read). Elsewhere:
  ``bot.models.DecisionModelError`` (a decision model's response is neither yes nor no).
- ``StorageError``: what the database holds cannot be read, or it cannot record now; neither
  the program nor a person caused it, and the remedy is an operator's (put a key back) or a
  retry. ``bot.security``'s ``UnknownKeyError``, ``DecryptionError``, ``ReencryptError``, and
  ``channels.slack``'s ``SeenEventsBusyError`` (Slack delivers the event again).

Messages name the ids involved and what to do next, but never a pause id: the pause id is the
right to answer and must not leak through logs or error reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
# Misuse: the program uses Countersign wrongly; fix its code or its configuration.


class UsageError(CountersignError):
    """The program uses Countersign wrongly: fix its code or its configuration."""

    code = "usage.invalid"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssemblyViolation:
    """One broken assembly rule: ``rule`` is the bracketed code, e.g. ``name.kind-suffix``."""

    rule: str
    component: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.component}: {self.message}"


class AssemblyError(UsageError):
    """The application breaks one or more assembly rules; ``violations`` lists every one."""

    code = "assembly.invalid"

    def __init__(self, violations: Sequence[AssemblyViolation]) -> None:
        self.violations: tuple[AssemblyViolation, ...] = tuple(violations)
        lines = "\n".join(f"  - {v}" for v in self.violations)
        super().__init__(f"the application is not assembled correctly:\n{lines}")

    @property
    def rules(self) -> list[str]:
        return [v.rule for v in self.violations]


class SetupError(UsageError):
    """A test kit or API misuse that is not an assembly rule (e.g. mock_llm of a code component)."""

    code = "setup.invalid"


class SettingsError(UsageError):
    """A missing or malformed setting; the message names the setting."""

    code = "settings.invalid"


class AppClosedError(UsageError):
    """The App was closed; create a new one."""

    code = "app.closed"


class UnknownThreadError(UsageError):
    """No execution is known for this thread and tenant."""

    code = "thread.unknown"


# --------------------------------------------------------------------------------------------
# Refused answers: nothing was recorded, the pause is as it was; tell the person who answered.


class AnswerRefusedError(CountersignError):
    """An answer to a pause was refused; nothing was recorded and the pause is as it was."""

    code = "answer.refused"


class GrantRefusedError(AnswerRefusedError):
    """A standing grant was refused (``App.grant``): nothing was stored; the message says why
    (the role offers no grants or not this scope, the granter may not approve, a bound that is
    no number, ...)."""

    code = "grant.refused"


class UnknownGrantError(GrantRefusedError):
    """No grant with this id for this tenant (also for another tenant's id: no hint is given)."""

    code = "grant.unknown"

    def __init__(self, message: str = "no grant with that id is known for this tenant") -> None:
        super().__init__(message)


class UnknownPauseError(AnswerRefusedError):
    """No pause with this id for this tenant (also for another tenant's id: no hint is given)."""

    code = "pause.unknown"

    def __init__(self, message: str = "no pause with that id is known for this tenant") -> None:
        super().__init__(message)


class NotPausedError(AnswerRefusedError):
    """The pause was already answered, withdrawn or cancelled."""

    code = "run.not-paused"


class PauseAnswererError(AnswerRefusedError):
    """The wrong kind of credential for this pause (owner_id for a CHANNEL pause or vice versa)."""

    code = "pause.wrong-answerer"


class SelfApprovalError(PauseAnswererError):
    """The execution's owner answered a pause of a role with separation of duties: a person
    may not approve their own request. The pause keeps waiting for someone else."""

    code = "pause.self-approval"


class AlreadyApprovedError(AnswerRefusedError):
    """The person approved this question already and it needs another approver too (a role's
    ``required_approvals``): their second approval is not counted. The pause keeps waiting."""

    code = "pause.already-approved"


class ProposalChangedError(AnswerRefusedError):
    """An approval of a proposal that an edit replaced while it was given (a role's
    ``required_approvals``): approve what is shown now. The pause keeps waiting."""

    code = "pause.proposal-changed"


class ThreadOwnerError(AnswerRefusedError):
    """A THREAD_OWNER pause answered by someone who does not own the thread."""

    code = "pause.not-thread-owner"


OVERRIDES_FIELD = "override_arguments"
REASON_FIELD = "reason"
"""The fields of a decision ``DtoValidationError.field_errors`` names."""


class DtoValidationError(AnswerRefusedError):
    """A decision, a resume request or a DTO is invalid; nothing was recorded.

    ``field_errors`` says what is wrong with each field of a decision, for the person who
    answered (never pydantic's wording): ``reason`` (a rejection its role takes only with a
    reason) and, for an edit, ``override_arguments.<key>`` per argument (``argument_errors``),
    so a form or a modal shows each next to its input; for an input ``execute`` refused, by its
    fields. Empty when no field is to blame.
    """

    code = "dto.invalid"

    def __init__(self, message: str, *, field_errors: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.field_errors: dict[str, str] = dict(field_errors or {})

    def said(self) -> str:
        """What is wrong, for the person who answered: each field's error after its name
        (``amount: Enter a number.``), else the message."""
        if not self.field_errors:
            return self.message
        prefix = f"{OVERRIDES_FIELD}."
        return " ".join(
            f"{key.removeprefix(prefix)}: {said}" if key != REASON_FIELD else said
            for key, said in self.field_errors.items()
        )

    def argument_errors(self) -> dict[str, str]:
        """The errors of edited arguments, by the argument's key."""
        prefix = f"{OVERRIDES_FIELD}."
        return {
            key.removeprefix(prefix): said
            for key, said in self.field_errors.items()
            if key.startswith(prefix)
        }


class UninterpretableReplyError(AnswerRefusedError):
    """A free-text reply could not be read as a valid answer; the pause stays pending."""

    code = "pause.uninterpretable-reply"

    def __init__(self, reason: str, *, language: str | None = None) -> None:
        self.reason = reason
        self.language = language  # the language the interpreter read it in, when it knew one
        super().__init__(f"the reply could not be read as an answer: {reason}")


class ReplyInterpreterMissingError(AnswerRefusedError):
    """A reply was given for a role that has no reply interpreter; the pause is untouched."""

    code = "pause.no-reply-interpreter"


# --------------------------------------------------------------------------------------------
# Execution failures: an execution's work failed at run time; the execution records it.


class ExecutionFailedError(CountersignError):
    """An execution's work failed at run time (a step, a model, a tool, a budget, a policy)."""

    code = "execution.failed"


class StepFailedError(ExecutionFailedError):
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


class BudgetExceededError(ExecutionFailedError):
    """A budget is exhausted; the model was not called."""

    code = "budget.exceeded"


class PauseExpiredError(StepFailedError):
    """A question expired before anyone answered it, and its timing says the step fails
    (``PauseTiming(on_expiry=OnExpiry.FAIL)``); nobody answering is not a rejection."""

    code = "pause.expired"


class PiiRefusedError(ExecutionFailedError):
    """A PII policy blocks what would be sent to a model."""

    code = "pii.refused"


class ToolError(ExecutionFailedError):
    """Raised by a tool for a failure the model should read and may work around.

    Any other exception a tool raises fails the agent's step (``AgentFailedError``, the
    exception as cause): a side effect that failed is not silently retried by the model.
    """

    code = "tool.error"


# --------------------------------------------------------------------------------------------
# Storage: what the database holds cannot be read, or it cannot record now (bot.security's
# errors, channels.slack's SeenEventsBusyError); the remedy is an operator's or a retry.


class StorageError(CountersignError):
    """What the database holds cannot be read, or the database cannot record now."""

    code = "storage.failed"


class RunInterruptedError(StorageError):
    """A pass met the database (or the network) gone for a while: a lost connection, a server
    restarting, a serialization failure. It is not the run's failure: the tree stays paused or
    running as it was, and the recovery sweep continues it (an answer recorded before it is
    continued then); the original error is ``__cause__``."""

    code = "run.interrupted"

    def __init__(self, message: str, *, execution_id: str | None = None) -> None:
        self.execution_id = execution_id
        super().__init__(message)


class ChannelUnavailableError(RunInterruptedError):
    """A channel could not deliver now (its service failing, rate limited, unreachable, or not
    answering in time) and trying again later may well succeed. Raised by a channel's ``send``:
    the question waits as not yet delivered (PENDING, not sent) and the recovery sweep asks
    again, instead of failing the step. A channel error that trying again cannot mend (a bad
    conversation id, a bot not in it) is any other exception, and fails the step."""

    code = "channel.unavailable"
