"""Sensitive fields of a tool's input: marked on the model, masked wherever a question is shown.

Mark a field with ``Annotated[str, Sensitive()]`` or
``Field(json_schema_extra={"sensitive": True})``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

MASK = "••••••"


@dataclass(frozen=True, slots=True)
class Sensitive:
    """Marks a field whose value must never be shown (Slack, /pending, logs, audit, events)."""


def sensitive_fields(model: type[BaseModel] | None) -> frozenset[str]:
    """The names of the fields of ``model`` marked sensitive."""
    if model is None:
        return frozenset()
    names: set[str] = set()
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra
        if isinstance(extra, dict) and extra.get("sensitive") is True:
            names.add(name)
        if any(isinstance(meta, Sensitive) for meta in info.metadata):
            names.add(name)
    return frozenset(names)


def mask_arguments(model: type[BaseModel] | None, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``arguments`` with every sensitive field's value replaced by a mask."""
    hidden = sensitive_fields(model)
    return {key: (MASK if key in hidden else value) for key, value in arguments.items()}
