"""The Edit & approve form: its fields made from the tool input's JSON schema, and reading a
submitted form back into override arguments with an error per field.

Each property of the schema is one input named after the argument's key. Numbers, booleans,
choices (``enum``) and text have inputs of their own; anything else (objects, lists, unions)
is edited as JSON. A sensitive field (``bot.core.sensitive``) never shows its value: its input
starts empty, and left empty it keeps the value it had.

An emptied input is no value, never "keep the old one": ``None`` where the schema allows it,
the field's default where it has one, else that field's error ("Enter a value."). A posted
``arg.<key>`` the schema does not declare is refused, never dropped. A number may be typed
with thousands separators, as the request's page shows money (``1,234.50``), and a number
starts as the page shows it. Titles are the kit's (``Order ID``), as the question shows them.
What is refused is said in our words (``bot.core.field_errors``), never pydantic's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel, ValidationError

from bot.core import field_errors
from bot.core.sensitive import sensitive_fields
from channels.kit.values import field_title, format_value, typed_number

FieldKind = Literal["integer", "number", "boolean", "choice", "text", "json"]
FIELD_PREFIX: Final = "arg."
"""Form inputs of arguments are named ``arg.<key>``, apart from the form's own fields."""
_SIMPLE: Final[Mapping[str, FieldKind]] = {
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
    "string": "text",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class FormField:
    key: str
    title: str
    kind: FieldKind
    choices: tuple[str, ...]
    required: bool
    sensitive: bool
    description: str | None
    nullable: bool = False
    """The schema takes ``null``: an emptied input is ``None``."""
    model: type[BaseModel] | None = None
    """The input model: a number starts as the question shows it (``1,234.50``)."""

    @property
    def input_name(self) -> str:
        return f"{FIELD_PREFIX}{self.key}"


def form_fields(model: type[BaseModel]) -> list[FormField]:
    """The form's fields, in the schema's order."""
    schema = model.model_json_schema(by_alias=True)
    required = set(schema.get("required", ()))
    hidden = _sensitive_keys(model)
    properties: Mapping[str, Any] = schema.get("properties", {})
    defs: Mapping[str, Any] = schema.get("$defs", {})
    return [
        _field(key, prop, defs, required=key in required, sensitive=key in hidden, model=model)
        for key, prop in properties.items()
    ]


def _sensitive_keys(model: type[BaseModel]) -> set[str]:
    names = sensitive_fields(model)
    return {info.alias or name for name, info in model.model_fields.items() if name in names}


def _field(
    key: str,
    prop: Mapping[str, Any],
    defs: Mapping[str, Any],
    *,
    required: bool,
    sensitive: bool,
    model: type[BaseModel],
) -> FormField:
    kind, choices = _classify(_resolved(_without_null(prop), defs))
    return FormField(
        key=key,
        title=field_title(model, key),  # titled as the question shows it (channels.kit.values)
        model=model,
        kind=kind,
        choices=choices,
        required=required,
        sensitive=sensitive,
        description=prop.get("description"),
        nullable=_takes_null(prop),
    )


def _takes_null(prop: Mapping[str, Any]) -> bool:
    options = prop.get("anyOf")
    if isinstance(options, list):
        return any(isinstance(o, dict) and o.get("type") == "null" for o in options)
    kind = prop.get("type")
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


def _without_null(prop: Mapping[str, Any]) -> Mapping[str, Any]:
    """``X`` for ``anyOf: [X, null]``; other schemas as they are."""
    options = prop.get("anyOf")
    if isinstance(options, list):
        rest = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(rest) == 1 and isinstance(rest[0], dict):
            return rest[0]
    return prop


def _resolved(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found = defs.get(ref.removeprefix("#/$defs/"))
        if isinstance(found, dict):
            return found
    return prop


def _classify(prop: Mapping[str, Any]) -> tuple[FieldKind, tuple[str, ...]]:
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return "choice", tuple(enum)
    if "const" in prop and isinstance(prop["const"], str):
        return "choice", (prop["const"],)
    kind = _SIMPLE.get(str(prop.get("type")))
    return (kind, ()) if kind is not None else ("json", ())


def shown_value(field: FormField, arguments: Mapping[str, Any]) -> str:
    """The text an input starts with: the current value, never a sensitive one."""
    if field.sensitive or field.key not in arguments:
        return ""
    value = arguments[field.key]
    if field.kind == "json":
        return json.dumps(value, ensure_ascii=False)
    if field.kind == "boolean":
        return "true" if value is True else "false"
    if field.kind in ("integer", "number") and isinstance(value, int | float):
        return format_value(field.model, field.key, value)  # read back as typed (_number)
    return "" if value is None else str(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Submission:
    """What a submitted form says: the values typed (to show again) and, when they make a valid
    input, the override arguments; else an error per field key (``""``: the whole form)."""

    typed: dict[str, str]
    overrides: dict[str, Any] | None
    errors: dict[str, str]


def read_form(
    model: type[BaseModel], arguments: Mapping[str, Any], form: Mapping[str, str]
) -> Submission:
    """Read ``form`` against the tool's input ``model`` and the question's real ``arguments``
    (unmasked: a sensitive field left empty keeps its value)."""
    fields = form_fields(model)
    typed = {f.key: form.get(f.input_name, "") for f in fields}
    errors: dict[str, str] = {}
    undeclared = _undeclared(form, typed)
    if undeclared:
        errors[""] = (
            f"This form sends {', '.join(undeclared)}, which this request does not take: "
            "open the link again and use its form."
        )
    values: dict[str, Any] = dict(arguments)
    for field in fields:
        raw = typed[field.key] if field.kind == "text" else typed[field.key].strip()
        if raw == "":
            _when_empty(field, arguments, values)
            continue
        try:
            values[field.key] = _parse(field, raw)
        except ValueError as error:
            errors[field.key] = str(error)
    try:
        validated = model.model_validate(values)
    except ValidationError as error:
        for key, problem in field_errors.by_field(error).items():
            errors.setdefault(key if key in typed else "", problem)
    else:
        if not errors:
            dumped = validated.model_dump(mode="json", by_alias=True)
            return Submission(
                typed=typed,
                overrides={k: dumped[k] for k in typed if k in dumped},
                errors={},
            )
    return Submission(typed=typed, overrides=None, errors=errors)


def _undeclared(form: Mapping[str, str], typed: Mapping[str, str]) -> list[str]:
    """The argument inputs posted that the form does not have (a forged or stale form)."""
    return sorted(
        name.removeprefix(FIELD_PREFIX)
        for name in form
        if name.startswith(FIELD_PREFIX) and name.removeprefix(FIELD_PREFIX) not in typed
    )


def _when_empty(field: FormField, arguments: Mapping[str, Any], values: dict[str, Any]) -> None:
    """What an emptied input means: a sensitive one keeps its hidden value; else ``None`` where
    the schema takes it, the default where there is one (the argument left out), and for a
    required field no value at all (the model says "Enter a value.")."""
    if field.sensitive and field.key in arguments:
        return
    if field.nullable:
        values[field.key] = None
    elif field.kind == "text" and not field.required:
        values[field.key] = ""
    else:
        values.pop(field.key, None)


def _parse(field: FormField, raw: str) -> object:
    match field.kind:
        case "boolean":
            if raw not in ("true", "false"):
                raise ValueError("Choose yes or no.")
            return raw == "true"
        case "choice":
            if raw not in field.choices:
                raise ValueError("Choose one of the options.")
            return raw
        case "json":
            try:
                return json.loads(raw)
            except json.JSONDecodeError as error:
                raise ValueError(f"Enter valid JSON ({error.msg}).") from None
        case "integer" | "number":
            return _number(raw)
        case _:
            return raw


def _number(raw: str) -> str:
    """The number typed, for the model to read (it says what is wrong): one typed as the page
    shows money (``1,234.50``) without its separators; one that is no number (``inf``,
    ``nan``, ``1e400``) refused as such."""
    raw = typed_number(raw)
    try:
        finite = math.isfinite(float(raw))
    except ValueError:
        return raw
    if not finite:
        raise ValueError(field_errors.NOT_FINITE)
    return raw
