"""Validation of decisions: a resume's, an interpreter's and a channel's decided-at-once."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from bot.core.dtos import ToolCallApprovalDecision
from bot.core.errors import DtoValidationError


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
    """A valid decision or ``DtoValidationError`` (raised with no pydantic error behind it:
    the message says what is wrong).

    ``override_arguments`` is allowed only with ``approved=True``; each key must be a field of
    the tool's input (a misspelt key would otherwise be dropped and the original value run), and
    together with the original arguments (fields not given keep their value) they must make a
    valid input of the tool.
    """
    decision = _parse(raw)
    if isinstance(decision, str):
        raise DtoValidationError(decision)
    if decision.override_arguments is None or tool_input is None:
        return decision
    takes_any = tool_input.model_config.get("extra") == "allow"  # a schema-less tool's input
    unknown = [] if takes_any else unknown_fields(tool_input, decision.override_arguments)
    if unknown:
        known = ", ".join(sorted(tool_input.model_fields)) or "none"
        raise DtoValidationError(
            f"override_arguments: {', '.join(repr(k) for k in unknown)} "
            f"{'is not a field' if len(unknown) == 1 else 'are not fields'} of the tool's input "
            f"(its fields: {known})"
        )
    merged = {**arguments, **decision.override_arguments}
    try:
        valid = tool_input.model_validate(merged)
    except ValidationError as error:
        problem = f"override_arguments are not a valid input of the tool: {_describe(error)}"
    else:
        return decision.model_copy(update={"override_arguments": valid.model_dump(mode="json")})
    raise DtoValidationError(problem)


def _parse(raw: object) -> ToolCallApprovalDecision | str:
    """The decision ``raw`` is, or what makes it none."""
    if isinstance(raw, ToolCallApprovalDecision):
        return raw
    if not isinstance(raw, dict):
        return f"a decision is a ToolCallApprovalDecision or a dict, not {type(raw).__name__}"
    try:
        return ToolCallApprovalDecision.model_validate(raw)
    except ValidationError as error:
        return invalid_decision(error)


def invalid_decision(error: ValidationError) -> str:
    """The message of a decision pydantic refused."""
    return f"invalid decision: {_describe(error)}"


def unknown_fields(model: type[BaseModel], values: dict[str, Any]) -> list[str]:
    """The keys of ``values`` that are neither a field of ``model`` nor one's alias."""
    known = set(model.model_fields)
    known |= {info.alias for info in model.model_fields.values() if info.alias}
    return [key for key in values if key not in known]
