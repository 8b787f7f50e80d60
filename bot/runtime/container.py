"""A small dependency container: ``deps=[A, ExecutionContext, ...]`` → constructor arguments.

Services (non-component classes named in ``deps``) are created once per App, with no arguments,
unless an instance was provided to ``App.create(services=...)``. Components (tools, channels,
interpreters) are created per use, so each gets the ``ExecutionContext`` of its own step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.components.specs import spec_of
from bot.core.context import ExecutionContext
from bot.runtime.model_overrides import instance_override_for


class Container:
    def __init__(self, services: Mapping[type, object] | None = None) -> None:
        self._services: dict[type, object] = dict(services or {})

    def provide(self, cls: type, instance: object) -> None:
        self._services[cls] = instance

    def service(self, cls: type) -> Any:
        if cls not in self._services:
            self._services[cls] = cls()
        return self._services[cls]

    def create(self, component: type, context: ExecutionContext | None) -> Any:
        """An instance of ``component`` with its deps injected in the order they are named."""
        if component in self._services:
            return self._services[component]
        mocked = instance_override_for(component)
        if mocked is not None:
            return mocked
        spec = spec_of(component)
        deps = spec.deps if spec is not None else ()
        arguments = [self._resolve(dep, context) for dep in deps]
        return component(*arguments)

    def _resolve(self, dep: type, context: ExecutionContext | None) -> Any:
        if dep is ExecutionContext:
            if context is None:
                raise LookupError("ExecutionContext is only available inside an execution")
            return context
        return self.service(dep)
