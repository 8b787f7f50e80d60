"""Validation of decisions: a resume's, an interpreter's and a channel's decided-at-once.

``validate_decision`` is the one boundary every answer crosses, whichever way it came (a
button, a form, a modal, a reply read by an interpreter, ``App.resume`` / ``App.answer``, a
channel's ``ChannelOutcome.decided``). What it refuses is a ``DtoValidationError`` whose
``field_errors`` say, in our words (``bot.core.field_errors``), what is wrong with each field.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ValidationError

from bot.core import field_errors
from bot.core.dtos import RejectReason, ToolCallApprovalDecision, lacks_required_reason
from bot.core.errors import OVERRIDES_FIELD, REASON_FIELD, DtoValidationError

REASON_REQUIRED: Final = "Say why you reject it: this request takes a rejection only with a reason."
"""What a person is told about a rejection without the reason its role requires."""
REASON_REQUIRED_IN_WORDS: Final = (
    "This request takes a rejection only with a reason: write it after a colon, "
    'like "reject: wrong customer".'
)
"""The same, about a reply: how to give the reason in words."""


def validate_decision(
    raw: ToolCallApprovalDecision | dict[str, Any] | Any,
    *,
    tool_input: type[BaseModel] | None,
    arguments: dict[str, Any],
) -> ToolCallApprovalDecision:
    """A valid decision or ``DtoValidationError`` (raised with no pydantic error behind it:
    the message says what is wrong, ``field_errors`` says it per field for a person).

    A ``ToolCallApprovalDecision`` is validated again as if it came from outside: one built
    with ``model_construct`` skipped its checks (a rejection that carries override arguments
    would otherwise run as a plain rejection).

    ``override_arguments`` is allowed only with ``approved=True``; each key must be a field of
    the tool's input (a misspelt key would otherwise be dropped and the original value run), and
    together with the original arguments (fields not given keep their value) they must make a
    valid input of the tool. A number that is no number (infinity, NaN, or too large to store:
    it reads as infinity) is refused wherever it is, in what was given and in what the tool's
    input made of it: JSON cannot carry it, so the tool would not run with what was approved.
    """
    decision = _parse(raw)
    if isinstance(decision, DtoValidationError):
        raise decision
    if decision.override_arguments is None:
        return decision
    _refuse_non_finite(decision.override_arguments)
    if tool_input is None:
        return decision
    takes_any = tool_input.model_config.get("extra") == "allow"  # a schema-less tool's input
    unknown = [] if takes_any else unknown_fields(tool_input, decision.override_arguments)
    if unknown:
        known = ", ".join(sorted(tool_input.model_fields)) or "none"
        raise DtoValidationError(
            f"{OVERRIDES_FIELD}: {', '.join(repr(k) for k in unknown)} "
            f"{'is not a field' if len(unknown) == 1 else 'are not fields'} of the tool's input "
            f"(its fields: {known})",
            field_errors={
                _argument(key): f"{field_errors.NOT_A_FIELD} Its fields: {known}."
                for key in unknown
            },
        )
    merged = {**arguments, **decision.override_arguments}
    try:
        valid = tool_input.model_validate(merged)
    except ValidationError as error:
        refusal = _invalid_arguments(error)
    else:
        _refuse_non_finite(valid.model_dump(by_alias=True))
        return decision.model_copy(update={"override_arguments": valid.model_dump(mode="json")})
    raise refusal  # outside the except: no pydantic error behind it


def check_reason(decision: ToolCallApprovalDecision, rule: RejectReason) -> None:
    """``DtoValidationError`` for a rejection without the reason its role requires
    (``reject_reason="required"``), with the reason's field error."""
    if lacks_required_reason(decision, rule):
        raise DtoValidationError(
            f"{REASON_FIELD}: this role takes a rejection only with a reason "
            '(reject_reason="required"): give reason="..."',
            field_errors={REASON_FIELD: REASON_REQUIRED},
        )


def _parse(raw: object) -> ToolCallApprovalDecision | DtoValidationError:
    """The decision ``raw`` is, or the refusal of it."""
    if isinstance(raw, ToolCallApprovalDecision):
        raw = _fields_of(raw)
    if not isinstance(raw, dict):
        return DtoValidationError(
            f"a decision is a ToolCallApprovalDecision or a dict, not {type(raw).__name__}"
        )
    try:
        return ToolCallApprovalDecision.model_validate(raw)
    except ValidationError as error:
        return DtoValidationError(
            invalid_decision(error), field_errors=field_errors.by_field(error)
        )


def _fields_of(decision: ToolCallApprovalDecision) -> dict[str, Any]:
    """The fields a decision object holds, as they would come from outside (a subclass's own
    attributes are no part of the decision)."""
    held = vars(decision)
    return {name: held[name] for name in ToolCallApprovalDecision.model_fields if name in held}


def invalid_decision(error: ValidationError) -> str:
    """The message of a decision pydantic refused, in our words."""
    return f"invalid decision: {field_errors.described(error)}"


def _invalid_arguments(error: ValidationError) -> DtoValidationError:
    problems = field_errors.by_field(error)
    return DtoValidationError(
        f"{OVERRIDES_FIELD} are not a valid input of the tool: {field_errors.described(error)}",
        field_errors={_argument(key): said for key, said in problems.items()},
    )


def _refuse_non_finite(values: dict[str, Any]) -> None:
    places = list(field_errors.non_finite(values))
    if places:
        raise DtoValidationError(
            f"{OVERRIDES_FIELD}: {', '.join(places)}: not a finite number "
            "(infinity, NaN and numbers too large to store cannot be run with)",
            field_errors={
                _argument(place.split(".")[0]): field_errors.NOT_FINITE for place in places
            },
        )


def _argument(key: str) -> str:
    """The field error's key of an argument (``""``: the arguments as a whole)."""
    return f"{OVERRIDES_FIELD}.{key}" if key else OVERRIDES_FIELD


def unknown_fields(model: type[BaseModel], values: dict[str, Any]) -> list[str]:
    """The keys of ``values`` that are neither a field of ``model`` nor one's alias."""
    known = set(model.model_fields)
    known |= {info.alias for info in model.model_fields.values() if info.alias}
    return [key for key in values if key not in known]
