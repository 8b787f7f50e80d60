"""DTOs that cross the public API: pydantic models, validated where outside data comes in."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema


class WorkflowStartText(BaseModel):
    """The plain-text input of a workflow."""

    model_config = ConfigDict(extra="forbid")

    text: str


class WorkflowFinishText(BaseModel):
    """The plain-text output of a workflow."""

    model_config = ConfigDict(extra="forbid")

    text: str


class ToolCallApprovalAsk(BaseModel):
    """The question of an approval pause: which tool, with which arguments, for which call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    arguments: dict[str, Any]
    call_id: str
    description: str | None = None
    """What the asker says about the call (an attached graph's human-in-the-loop request)."""
    allowed_decisions: tuple[str, ...] | None = None
    """The kinds of answer the asker takes, of ``approve``, ``edit``, ``reject``, ``respond``;
    None: ``approve``, ``edit`` and ``reject`` (``respond`` only where the asker names it)."""
    request: str | None = None
    """What the person who started the work asked, in their words (the workflow's start text,
    or the latest human message before the call), masked like the arguments; None if unknown."""
    stated_reason: str | None = None
    """The model's own words in the turn that made the call (why the agent wants to do this),
    masked like the arguments; None where the model said nothing beside the call."""

    def allows(self, decision: ToolCallApprovalDecision) -> bool:
        """Whether the asker takes ``decision``: an approval with changed arguments is an
        ``edit``."""
        return self.allows_kind(decision_kind(decision))

    def allows_kind(self, kind: str) -> bool:
        """Whether the asker takes answers of ``kind`` (``approve``, ``edit``, ``reject``): what
        a channel offers (no Edit & approve button where ``edit`` is not taken)."""
        return takes_kind(self.allowed_decisions, kind)


def takes_kind(allowed_decisions: tuple[str, ...] | None, kind: str) -> bool:
    """``ToolCallApprovalAsk.allows_kind`` of an asker taking ``allowed_decisions`` (for a view
    that keeps only those)."""
    if allowed_decisions is None:
        return kind != "respond"  # only an asker that reads a response may be given one
    return kind in allowed_decisions


class ToolCallApprovalDecision(BaseModel):
    """The answer to an approval pause.

    ``override_arguments`` is allowed only with ``approved=True``; that it is a valid input of the
    tool is checked by the runtime, which knows the tool.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    approved: bool
    reason: str | None = Field(default=None, max_length=3000)
    override_arguments: dict[str, Any] | None = None
    response: Annotated[str | None, SkipJsonSchema()] = Field(
        default=None, min_length=1, max_length=3000
    )
    """An answer given in place of the tool's result: the tool does not run and the asker reads
    this instead (LangChain's ``respond`` decision). Only with ``approved=False`` and where the
    question takes ``respond``. Left out of the JSON schema (a model reading a reply never
    gives one) and out of dumps when not given (stored decisions keep their shape)."""

    @model_validator(mode="after")
    def _overrides_only_when_approved(self) -> ToolCallApprovalDecision:
        if self.override_arguments is not None and not self.approved:
            raise ValueError("override_arguments is allowed only with approved=true")
        if self.response is not None and (self.approved or self.reason is not None):
            raise ValueError("response is allowed only with approved=false and no reason")
        return self

    @model_serializer(mode="wrap")
    def _without_an_absent_response(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        if self.response is None:
            dumped.pop("response", None)
        return dumped


RejectReason = Literal["required", "optional"]
"""Whether a rejection must say why: a role's ``reject_reason`` (``"optional"`` by default)."""
REJECT_REASONS: Final[tuple[RejectReason, ...]] = ("required", "optional")


def lacks_required_reason(decision: ToolCallApprovalDecision, rule: RejectReason) -> bool:
    """Whether ``decision`` is a rejection without the reason ``rule`` requires (an answer
    given in place of the tool is no rejection: its text is what the asker reads)."""
    if rule != "required" or decision.approved or decision.response is not None:
        return False
    return not (decision.reason or "").strip()


def decision_kind(decision: ToolCallApprovalDecision) -> str:
    """``approve``, ``edit`` (approved with changed arguments), ``reject`` or ``respond`` (a
    response in place of the tool's result)."""
    if not decision.approved:
        return "reject" if decision.response is None else "respond"
    return "approve" if decision.override_arguments is None else "edit"
