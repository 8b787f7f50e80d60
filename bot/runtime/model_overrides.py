"""Chat models that stand in for a component's model (set by ``bot.testing.mock_llm``).

A scripted component needs no provider for its model name. The registry is process-wide like
``unittest.mock.patch``; the test kit's pytest plugin clears it after every test.
"""

from __future__ import annotations

from typing import Any

_OVERRIDES: dict[type, Any] = {}
_INSTANCES: dict[type, object] = {}


def set_override(component: type, model: Any) -> None:
    _OVERRIDES[component] = model


def override_for(component: type) -> Any | None:
    return _OVERRIDES.get(component)


def set_instance_override(component: type, instance: object) -> None:
    """Every creation of ``component`` (or of a class that extends it) gives ``instance``."""
    _INSTANCES[component] = instance


def instance_override_for(component: type) -> object | None:
    for cls in component.__mro__:
        if cls in _INSTANCES:
            return _INSTANCES[cls]
    for mocked, instance in _INSTANCES.items():  # a role resolves to its mocked implementation
        if issubclass(mocked, component):
            return instance
    return None


def clear_overrides() -> None:
    _OVERRIDES.clear()
    _INSTANCES.clear()
