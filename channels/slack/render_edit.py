"""The fields of an edit modal, and reading its submission back into override arguments.

Each field of the tool's input model becomes one input whose block id is the argument's key
(the field's alias, else its name) and whose action id is always ``"value"``. Inputs that cannot
show the current value (sensitive fields, values too long for an input) start empty and are
optional: left empty, the original value is kept. What is refused is said in our words
(``bot.core.field_errors``), never pydantic's.
"""

from __future__ import annotations

import json
import math
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticUndefined

from bot.core.field_errors import NOT_FINITE, said
from bot.core.sensitive import MASK, sensitive_fields
from channels.kit.values import humanize, typed_number
from channels.slack.render import ApprovalView, RenderError, truncate

VALUE_ACTION: Final = "value"

StateValues = Mapping[str, Mapping[str, Mapping[str, object]]]
"""A view_submission's ``view["state"]["values"]``: block id -> action id -> element state."""

FieldKind = Literal["int", "float", "bool", "choice", "text", "json"]

MAX_INPUT: Final = 3000  # plain_text_input's max_length: longer values are not prefilled
HIDDEN_UNAVAILABLE: Final = "The current value is hidden and not available here: enter it again."
_MAX_OPTIONS: Final = 100  # static_select
_MAX_ERROR: Final = 300
_SIMPLE: Final[tuple[tuple[type, FieldKind], ...]] = (
    (bool, "bool"),  # before int: bool is an int
    (int, "int"),
    (float, "float"),
    (str, "text"),
)


# --------------------------------------------------------------------------------------------
# Fields.


@dataclass(frozen=True, slots=True, kw_only=True)
class EditField:
    """One field of the input model, as the edit modal shows it."""

    key: str  # the argument's key and the input's block id
    title: str  # its label: Field(title=...) or the name humanized ("Order ID")
    kind: FieldKind
    choices: tuple[object, ...]  # for "choice": the values, in option order
    required: bool
    sensitive: bool
    description: str | None
    default: object  # shown when the argument was not given; None when there is none
    nullable: bool = False  # takes None: an emptied input is None


def require_model(view: ApprovalView) -> type[BaseModel]:
    if view.input_model is None:
        raise RenderError(
            f"tool {view.tool!r} has no input model, so its arguments cannot be "
            "edited: offer Approve and Reject only"
        )
    return view.input_model


def edit_fields(model: type[BaseModel]) -> list[EditField]:
    hidden = sensitive_fields(model)
    return [
        _field(name, info, sensitive=name in hidden) for name, info in model.model_fields.items()
    ]


def _field(name: str, info: FieldInfo, *, sensitive: bool) -> EditField:
    kind, choices = _classify(info.annotation)
    return EditField(
        key=info.alias or name,
        title=info.title or humanize(name),
        kind=kind,
        choices=choices,
        required=info.is_required(),
        sensitive=sensitive,
        description=info.description,
        default=None if info.default is PydanticUndefined else info.default,
        nullable=_takes_none(info.annotation),
    )


def _classify(annotation: object) -> tuple[FieldKind, tuple[object, ...]]:
    """Which input suits a field's type; anything unusual is edited as JSON."""
    annotation = _without_none(annotation)
    for simple, kind in _SIMPLE:
        if annotation is simple:
            return kind, ()
    choices: tuple[object, ...] = ()
    if get_origin(annotation) is Literal:
        choices = get_args(annotation)
    elif isinstance(annotation, type) and issubclass(annotation, Enum):
        choices = tuple(member.value for member in annotation)
    if 0 < len(choices) <= _MAX_OPTIONS:
        return "choice", choices
    return "json", ()


def _takes_none(annotation: object) -> bool:
    return annotation is None or (
        get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation)
    )


def _without_none(annotation: object) -> object:
    """``X`` for ``X | None`` / ``Optional[X]``; other annotations as they are."""
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def plain(value: object) -> object:
    """An enum member's value; anything else as it is."""
    return value.value if isinstance(value, Enum) else value


def prefill(field: EditField, current: object) -> str | None:
    """The input's initial text for the current value; ``None`` when it cannot be shown."""
    if field.sensitive or current is None:
        return None
    if field.kind in ("int", "float"):
        ok = isinstance(current, int | float) and not isinstance(current, bool)
        return str(current) if ok else None
    if field.kind == "text" and isinstance(current, str):
        return current if len(current) <= MAX_INPUT else None
    if field.kind == "json":
        text = json.dumps(current, indent=2, ensure_ascii=False, default=str)
        return text if len(text) <= MAX_INPUT else None
    return None


def current_value(field: EditField, arguments: Mapping[str, Any]) -> object:
    """The argument's value, or the field's default when it was not given."""
    return arguments.get(field.key, field.default)


def keeps_when_empty(field: EditField, arguments: Mapping[str, Any]) -> bool:
    """Whether an empty input means "keep the current value" rather than "the default"."""
    if field.key not in arguments:
        return False
    if field.sensitive:
        return True
    current = arguments[field.key]
    return field.kind in ("text", "json") and prefill(field, current) is None


# --------------------------------------------------------------------------------------------
# Submissions.


class _Unreadable(Exception):
    """Input that cannot be used (bad JSON...): an internal signal, never raised out."""

    def __init__(self, raw: object, message: str) -> None:
        super().__init__(message)
        self.raw = raw
        self.message = message


_EMPTY: Final = object()


def parse_edit_submission(view: ApprovalView, state_values: StateValues) -> dict[str, Any]:
    """The override arguments a submission asks for, not validated.

    Every argument the modal shows is read back: an empty input keeps the original value
    where the modal said so (sensitive, or too long to show), else is ``None`` where the
    field takes it, else leaves the argument out (the model's default applies, or it is
    required: "Enter a value."). Arguments the model does not declare are kept as they
    were. Input that cannot be read (bad JSON) is kept as the raw text; see
    :func:`validate_edit_submission` for the errors.
    """
    return _collect(view, state_values)[0]


def validate_edit_submission(
    view: ApprovalView, state_values: StateValues
) -> tuple[dict[str, Any] | None, dict[str, str]]:
    """``(overrides, {})`` when the submission is a valid input, else ``(None, errors)``.

    ``errors`` maps input block ids to messages, ready for
    ``ack(response_action="errors", errors=errors)``. The overrides are the validated model
    dumped to JSON types, by alias, with only the arguments that were given.
    """
    model = require_model(view)
    arguments, read_errors = _collect(view, state_values)
    try:
        validated = model.model_validate(arguments)
    except ValidationError as error:
        return None, {**_block_errors(model, error.errors()), **read_errors}
    if read_errors:
        return None, read_errors
    return validated.model_dump(mode="json", by_alias=True, exclude_unset=True), {}


def _collect(
    view: ApprovalView, state_values: StateValues
) -> tuple[dict[str, Any], dict[str, str]]:
    fields = edit_fields(require_model(view))
    shown = {field.key for field in fields}
    arguments = {k: v for k, v in view.arguments.items() if k not in shown}
    errors: dict[str, str] = {}
    for field in fields:
        state = state_values.get(field.key, {}).get(VALUE_ACTION, {})
        try:
            value = _read(field, state)
            if value is _EMPTY:
                value = _when_empty(field, view.arguments)
        except _Unreadable as bad:
            errors[field.key] = bad.message
            value = bad.raw
        if value is not _EMPTY:
            arguments[field.key] = value
    return arguments, errors


def _when_empty(field: EditField, arguments: Mapping[str, Any]) -> object:
    """An emptied input: the value kept where the modal said so, else ``None`` where the
    field takes it, else no value (its default applies, or it is required)."""
    if not keeps_when_empty(field, arguments):
        return None if field.nullable else _EMPTY
    original = arguments[field.key]
    if field.sensitive and original == MASK:
        # The view was built from masked arguments: keeping "••••••" would send the mask on.
        raise _Unreadable(_EMPTY, HIDDEN_UNAVAILABLE)
    return original


def _read(field: EditField, state: Mapping[str, object]) -> object:
    """The value of one input, or ``_EMPTY``; ``_Unreadable`` for input it cannot use."""
    if field.kind in ("bool", "choice"):
        return _read_option(field, state.get("selected_option"))
    raw = state.get("value")
    if not isinstance(raw, str) or raw == "":
        return _EMPTY
    match field.kind:
        case "int":
            return _number(raw, int)
        case "float":
            return _number(raw, float)
        case "json":
            try:
                return json.loads(raw)
            except json.JSONDecodeError as error:
                raise _Unreadable(raw, f"Enter valid JSON ({error.msg}).") from None
        case _:
            return raw


def _read_option(field: EditField, selected: object) -> object:
    if not isinstance(selected, Mapping):
        return _EMPTY
    choices = (True, False) if field.kind == "bool" else field.choices
    index = selected.get("value")
    if isinstance(index, str) and index.isdigit() and int(index) < len(choices):
        return choices[int(index)]
    raise _Unreadable(_EMPTY, "Choose one of the options.")


def _number(raw: str, kind: type[int | float]) -> object:
    """The number typed; the raw text when it is not one, for the model to explain. A number
    that is no number (``inf``, ``nan``, ``1e400``) is refused as such."""
    try:
        number = kind(typed_number(raw).strip())
    except ValueError:
        return raw
    if isinstance(number, float) and not math.isfinite(number):
        raise _Unreadable(raw, NOT_FINITE)
    return number


def _block_errors(model: type[BaseModel], errors: Sequence[ErrorDetails]) -> dict[str, str]:
    """Pydantic errors grouped by the input block of their field.

    Errors about no single field (a model validator, an undeclared argument) go on the
    first input, so that Slack shows them somewhere.
    """
    fields = {field.key: field for field in edit_fields(model)}
    fallback = next(iter(fields), "arguments")
    grouped: dict[str, list[str]] = {}
    for error in errors:
        loc = error["loc"]
        field = fields.get(str(loc[0])) if loc else None
        block = field.key if field else fallback
        grouped.setdefault(block, []).append(_message(error, field))
    return {block: truncate("; ".join(messages), _MAX_ERROR) for block, messages in grouped.items()}


def _message(error: ErrorDetails, field: EditField | None) -> str:
    """One error in our words (``bot.core.field_errors``), never pydantic's."""
    if field is not None and field.sensitive and error["type"] == "missing":
        return HIDDEN_UNAVAILABLE
    loc = error["loc"]
    where = ".".join(str(part) for part in (loc[1:] if field else loc))
    return f"{where}: {said(error)}" if where else said(error)
