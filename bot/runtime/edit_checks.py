"""An edit is checked by what the approver was shown and by what runs: an attached graph's
tool is shown (and its edits checked) by its role's model, and runs with its own arguments'
schema, so an edit must make a valid input of both."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from bot.core.dtos import ToolCallApprovalDecision
from bot.core.errors import DtoValidationError
from bot.runtime.assembly import ToolBinding
from bot.runtime.decisions import validate_decision


def validate_for(
    binding: ToolBinding | None, raw: object, *, arguments: dict[str, Any]
) -> ToolCallApprovalDecision:
    """``raw`` as a valid decision about ``binding``'s tool (``DtoValidationError`` if not):
    by the input the approver is shown, then by the tool's own schema."""
    tool_input = None if binding is None else binding.spec.input
    decision = validate_decision(raw, tool_input=tool_input, arguments=arguments)
    return valid_for_the_tool(binding, decision, arguments=arguments)


def valid_for_the_tool(
    binding: ToolBinding | None, decision: ToolCallApprovalDecision, *, arguments: dict[str, Any]
) -> ToolCallApprovalDecision:
    """``decision`` (valid by what the approver is shown) if its edit is a valid input of the
    attached graph's tool too; ``DtoValidationError`` if not. The arguments kept are the ones
    the approver's model gave (a valid input of both)."""
    schema = None if binding is None else binding.tool_schema
    if binding is None or schema is None or decision.override_arguments is None:
        return decision
    try:
        schema.model_validate({**arguments, **decision.override_arguments})
    except ValidationError as error:
        fields = sorted({str(e["loc"][0]) if e["loc"] else "arguments" for e in error.errors()})
        raise DtoValidationError(
            f"the tool {binding.spec.name} does not take the edited "
            f"{', '.join(fields)} (its own rules refuse {'it' if len(fields) == 1 else 'them'}); "
            "the question still waits"
        ) from None
    return decision
