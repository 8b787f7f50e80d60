"""The flow builder: ``start(Start).returns(Dto).to_agent(Agent).to_finish(Finish)``."""

from __future__ import annotations

from dataclasses import dataclass, replace

from pydantic import BaseModel

from bot.components.specs import Flow, FlowStep


@dataclass(frozen=True, slots=True)
class FlowBuilder:
    """An immutable builder; every method returns a new builder."""

    _start: type
    _returns: type[BaseModel] | None = None
    _steps: tuple[FlowStep, ...] = ()
    _finish: type | None = None

    def returns(self, dto: type[BaseModel]) -> FlowBuilder:
        return replace(self, _returns=dto)

    def to_agent(self, agent: type) -> FlowBuilder:
        return replace(self, _steps=(*self._steps, FlowStep(agent=agent)))

    def to_finish(self, finish: type) -> FlowBuilder:
        return replace(self, _finish=finish)

    def build(self) -> Flow:
        return Flow(
            start=self._start, returns=self._returns, steps=self._steps, finish=self._finish
        )


def start(start_class: type) -> FlowBuilder:
    """Begin a flow at a ``@workflow_start`` component."""
    return FlowBuilder(start_class)
