"""Whether a role's model fits a tool's arguments: the check ``App.langgraph`` makes before an
attached graph's questions are shown (and edits checked) by the role's model.

A model fits a tool when the tool's argument names are exactly the model's field names, and
each field takes only values of JSON types the argument takes too (an ``int`` field fits a
``float`` argument, a ``float`` field does not fit an ``int`` one; a field or an argument
without a type takes anything). Constraints (``min_length``, ``gt``, patterns) are not
compared: an edit is checked by the role's model and by the tool's own schema, both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

JSON_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")


def fit_problems(model: type[BaseModel], arguments: Mapping[str, Any]) -> list[str]:
    """What keeps ``model`` from fitting a tool whose arguments' JSON schema is ``arguments``
    (an object schema: ``properties``, ``$defs``); empty when it fits."""
    fields = _Properties(model.model_json_schema(by_alias=False))
    taken = _Properties(arguments)
    problems = []
    missing = [name for name in taken.names if name not in fields.names]
    extra = [name for name in fields.names if name not in taken.names]
    if missing:
        problems.append(f"it has no field for the argument(s) {', '.join(missing)}")
    if extra:
        problems.append(f"its field(s) {', '.join(extra)} are not arguments of the tool")
    for name in fields.names:
        if name not in taken.names:
            continue
        given, wanted = fields.types(name), taken.types(name)
        if not _within(given, wanted):
            problems.append(
                f"the field {name} takes {_describe(given)}, the argument takes {_describe(wanted)}"
            )
    return problems


class _Properties:
    """An object schema's properties, their ``$ref`` resolved against its ``$defs``."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._defs: Mapping[str, Any] = schema.get("$defs") or schema.get("definitions") or {}
        self._properties: Mapping[str, Any] = schema.get("properties") or {}

    @property
    def names(self) -> list[str]:
        return list(self._properties)

    def types(self, name: str) -> frozenset[str] | None:
        return self._types(self._properties.get(name), depth=0)

    def _types(self, schema: object, *, depth: int) -> frozenset[str] | None:
        """The JSON types ``schema`` takes; None for any value."""
        if not isinstance(schema, Mapping) or depth > 20:
            return None
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._types(self._defs.get(ref.rsplit("/", 1)[-1]), depth=depth + 1)
        if "const" in schema:
            return frozenset({_type_of(schema["const"])})
        if isinstance(schema.get("enum"), list):
            return frozenset(_type_of(value) for value in schema["enum"])
        kind = schema.get("type")
        if isinstance(kind, str):
            return frozenset({kind})
        if isinstance(kind, list):
            return frozenset(k for k in kind if isinstance(k, str))
        for key in ("anyOf", "oneOf"):
            members = schema.get(key)
            if isinstance(members, list) and members:
                found = [self._types(member, depth=depth + 1) for member in members]
                if any(each is None for each in found):
                    return None
                return frozenset().union(*(each for each in found if each is not None))
        every = schema.get("allOf")
        if isinstance(every, list) and len(every) == 1:
            return self._types(every[0], depth=depth + 1)
        return None


def _within(given: frozenset[str] | None, wanted: frozenset[str] | None) -> bool:
    """Whether every value of the types ``given`` is of the types ``wanted``."""
    if wanted is None:
        return True
    if given is None:
        return False
    widened = wanted | {"integer"} if "number" in wanted else wanted
    return given <= widened


def _type_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _describe(types: frozenset[str] | None) -> str:
    if types is None:
        return "any value"
    return " or ".join(t for t in JSON_TYPES if t in types) or "no value"
