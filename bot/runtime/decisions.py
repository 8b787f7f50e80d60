"""Validation of decisions: a resume's, an interpreter's and a channel's decided-at-once."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from bot.core.dtos import ToolCallApprovalDecision
from bot.core.errors import DtoValidationError
from bot.core.sensitive import mask_arguments


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ())) or "decision"
        parts.append(f"{where}: {item.get('msg')}")
    return "; ".join(parts)


def validate_decision(
    raw: ToolCallApprovalDecision | dict[str, Any] | Any,
    *,
    tool_input: type[BaseModel] | None,
    arguments: dict[str, Any],
) -> ToolCallApprovalDecision:
    """A valid decision or ``DtoValidationError``.

    ``override_arguments`` is allowed only with ``approved=True`` and must make a valid input of
    the tool together with the original arguments (fields not given keep their value).
    """
    if isinstance(raw, ToolCallApprovalDecision):
        decision = raw
    elif isinstance(raw, dict):
        try:
            decision = ToolCallApprovalDecision.model_validate(raw)
        except ValidationError as error:
            raise DtoValidationError(f"invalid decision: {_describe(error)}") from None
    else:
        raise DtoValidationError(
            f"a decision is a ToolCallApprovalDecision or a dict, not {type(raw).__name__}"
        )
    if decision.override_arguments is not None and tool_input is not None:
        merged = {**arguments, **decision.override_arguments}
        try:
            valid = tool_input.model_validate(merged)
        except ValidationError as error:
            raise DtoValidationError(
                f"override_arguments are not a valid input of the tool: {_describe(error)}"
            ) from None
        decision = decision.model_copy(update={"override_arguments": valid.model_dump(mode="json")})
    return decision


def audit_view(
    decision: ToolCallApprovalDecision, tool_input: type[BaseModel] | None
) -> dict[str, Any]:
    """The decision as the audit trail keeps it: sensitive override values masked."""
    shown = decision.model_dump(mode="json")
    if decision.override_arguments is not None:
        shown["override_arguments"] = mask_arguments(tool_input, decision.override_arguments)
    return shown
