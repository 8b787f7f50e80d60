"""The Edit & approve form: its fields made from the tool input's JSON schema, and reading a
submitted form back into override arguments with an error per field.

Each property of the schema is one input named after the argument's key. Numbers, booleans,
choices (``enum``) and text have inputs of their own; anything else (objects, lists, unions)
is edited as JSON. A sensitive field (``bot.core.sensitive``) never shows its value: its input
starts empty, and left empty it keeps the value it had.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel, ValidationError

from bot.core.sensitive import sensitive_fields

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
        _field(key, prop, defs, required=key in required, sensitive=key in hidden)
        for key, prop in properties.items()
    ]


def _sensitive_keys(model: type[BaseModel]) -> set[str]:
    names = sensitive_fields(model)
    return {info.alias or name for name, info in model.model_fields.items() if name in names}


def _field(
    key: str, prop: Mapping[str, Any], defs: Mapping[str, Any], *, required: bool, sensitive: bool
) -> FormField:
    kind, choices = _classify(_resolved(_without_null(prop), defs))
    return FormField(
        key=key,
        title=str(prop.get("title") or key),
        kind=kind,
        choices=choices,
        required=required,
        sensitive=sensitive,
        description=prop.get("description"),
    )


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
    values: dict[str, Any] = dict(arguments)
    errors: dict[str, str] = {}
    for field in fields:
        raw = typed[field.key].strip() if field.kind != "text" else typed[field.key]
        if raw == "" and (field.sensitive or field.kind != "text"):
            if field.key not in arguments and field.required:
                errors[field.key] = "Enter a value."
            continue  # left empty: keeps its value
        try:
            values[field.key] = _parse(field, raw)
        except ValueError as error:
            errors[field.key] = str(error)
    try:
        validated = model.model_validate(values)
    except ValidationError as error:
        for detail in error.errors():
            loc = detail["loc"]
            key = str(loc[0]) if loc else ""
            key = key if key in typed else ""
            errors.setdefault(key, _message(detail["msg"], loc[1:]))
    else:
        if not errors:
            dumped = validated.model_dump(mode="json", by_alias=True)
            return Submission(
                typed=typed,
                overrides={k: dumped[k] for k in typed if k in dumped},
                errors={},
            )
    return Submission(typed=typed, overrides=None, errors=errors)


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
        case _:
            return raw  # numbers are read by the model, which says what is wrong


def _message(msg: str, where: tuple[int | str, ...]) -> str:
    path = ".".join(str(part) for part in where)
    return f"{path}: {msg}" if path else msg
