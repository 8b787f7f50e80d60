"""A small dependency container: ``deps=[A, ExecutionContext, ...]`` → constructor arguments.

Services (non-component classes named in ``deps``) are created once per App, with no arguments,
unless an instance was provided to ``App.create(services=...)``. Components (tools, channels,
interpreters) are created per use, so each gets the ``ExecutionContext`` of its own step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar, cast

from bot.components.specs import spec_of
from bot.core.context import ExecutionContext
from bot.runtime.model_overrides import instance_override_for

T = TypeVar("T")


class Container:
    def __init__(self, services: Mapping[type, object] | None = None) -> None:
        self._services: dict[type, object] = dict(services or {})

    def provide(self, cls: type, instance: object) -> None:
        self._services[cls] = instance

    def service(self, cls: type[T]) -> T:
        """The App's one ``cls``: the instance provided for it, else made once with no arguments.

        A provided instance stands in for ``cls`` (a fake need not subclass it), as a mock does.
        """
        if cls not in self._services:
            self._services[cls] = cls()
        return cast(T, self._services[cls])

    def create(self, component: type[T], context: ExecutionContext | None) -> T:
        """An instance of ``component`` with its deps injected in the order they are named.

        A provided instance or a mock (``mock_of``) stands in for the component.
        """
        if component in self._services:
            return cast(T, self._services[component])
        mocked = instance_override_for(component)
        if mocked is not None:
            return cast(T, mocked)
        spec = spec_of(component)
        deps = spec.deps if spec is not None else ()
        arguments = [self._resolve(dep, context) for dep in deps]
        return component(*arguments)

    def _resolve(self, dep: type, context: ExecutionContext | None) -> object:
        if dep is ExecutionContext:
            if context is None:
                raise LookupError("ExecutionContext is only available inside an execution")
            return context
        return self.service(dep)
