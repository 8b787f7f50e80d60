"""The flow builder.

``start(Start).returns(Dto).to_agent(Agent).to_finish(Finish)``, with launches in between:
``.to_parallel([A, B], join=join_quorum(max=1))``, ``.to_parallel_workflows([W1, W2])``,
``.for_each(Agent, items=..., max_concurrency=3)``, ``.to_workflow(Child)`` and
``.on_join_error(ErrorClass, handler)`` for the launch just added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel

from bot.components.joins import JoinErrorHandler, JoinFailFast, JoinPolicy
from bot.components.specs import Flow, FlowStep, LaunchStep, Step, StepErrorHandler


@dataclass(frozen=True, slots=True)
class FlowBuilder:
    """An immutable builder; every method returns a new builder."""

    _start: type
    _returns: type[BaseModel] | None = None
    _steps: tuple[Step, ...] = ()
    _finish: type | None = None

    def returns(self, dto: type[BaseModel]) -> FlowBuilder:
        return replace(self, _returns=dto)

    def to_agent(self, agent: type) -> FlowBuilder:
        return replace(self, _steps=(*self._steps, FlowStep(agent=agent)))

    def to_parallel(
        self,
        agents: Sequence[type],
        *,
        join: JoinPolicy | None = None,
        max_concurrency: int | None = None,
    ) -> FlowBuilder:
        """Run ``agents`` at once on the same input; a paused one does not stop the others."""
        return self._launch(tuple(agents), join=join, max_concurrency=max_concurrency)

    def to_parallel_workflows(
        self,
        workflows: Sequence[type],
        *,
        join: JoinPolicy | None = None,
        max_concurrency: int | None = None,
    ) -> FlowBuilder:
        """Run child workflows at once, each a child execution with its own id."""
        return self._launch(tuple(workflows), join=join, max_concurrency=max_concurrency)

    def to_workflow(self, workflow: type) -> FlowBuilder:
        """Run a child workflow as a step: a child execution with its own id."""
        return self._launch((workflow,), join=None, max_concurrency=None)

    def for_each(
        self,
        target: type,
        *,
        items: Callable[[str], Sequence[str]] | None = None,
        join: JoinPolicy | None = None,
        max_concurrency: int | None = None,
    ) -> FlowBuilder:
        """One branch of ``target`` (an agent or a workflow) per item of the list in the state.

        ``items`` reads the list from the previous step's text; by default a JSON list of
        strings, else one item per non-empty line.
        """
        return self._launch(
            (target,), join=join, max_concurrency=max_concurrency, items=items or default_items
        )

    def on_join_error(
        self, error_class: type[BaseException], handler: JoinErrorHandler
    ) -> FlowBuilder:
        """Handle a failure of the launch just added (matched by class and cause chain)."""
        if not self._steps or not isinstance(self._steps[-1], LaunchStep):
            raise TypeError("on_join_error(...) follows a launch (to_parallel, for_each, ...)")
        last = self._steps[-1]
        updated = replace(last, on_join_error=(*last.on_join_error, (error_class, handler)))
        return replace(self, _steps=(*self._steps[:-1], updated))

    def on_error(self, error_class: type[BaseException], handler: StepErrorHandler) -> FlowBuilder:
        """Handle a failure of the step just added (matched by class and cause chain): the
        handler's text is the step's answer and the flow goes on."""
        if not self._steps:
            raise TypeError("on_error(...) follows a step (to_agent, to_parallel, ...)")
        last = self._steps[-1]
        updated = replace(last, on_error=(*last.on_error, (error_class, handler)))
        return replace(self, _steps=(*self._steps[:-1], updated))

    def to_finish(self, finish: type) -> FlowBuilder:
        return replace(self, _finish=finish)

    def build(self) -> Flow:
        return Flow(
            start=self._start, returns=self._returns, steps=self._steps, finish=self._finish
        )

    def _launch(
        self,
        targets: tuple[type, ...],
        *,
        join: JoinPolicy | None,
        max_concurrency: int | None,
        items: Callable[[str], Sequence[str]] | None = None,
    ) -> FlowBuilder:
        if not targets:
            raise ValueError("a launch needs at least one branch")
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        step = LaunchStep(
            targets=targets,
            join=join or JoinFailFast(),
            items=items,
            max_concurrency=max_concurrency,
        )
        return replace(self, _steps=(*self._steps, step))


def default_items(text: str) -> list[str]:
    """A JSON list in the text, else its non-empty lines."""
    import json

    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        if isinstance(value, list):
            return [v if isinstance(v, str) else json.dumps(v) for v in value]
    return [line.strip() for line in text.splitlines() if line.strip()]


def start(start_class: type) -> FlowBuilder:
    """Begin a flow at a ``@workflow_start`` component."""
    return FlowBuilder(start_class)
