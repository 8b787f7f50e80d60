"""Budgets for model calls, what a model costs, and what was spent (values only, no I/O).

A ``Budget`` limits the model calls made under an application or a workflow:

* ``@application(budget=Budget(...))`` counts every call of the tenant — over the tenant's whole
  lifetime when ``window`` is ``None``, else over the rolling ``window`` that ends now on the
  application's clock.
* ``@workflow(budget=Budget(...))`` with ``window=None`` counts the calls made in one execution of
  the workflow (and the executions it launched): each execution tree has the whole budget. With a
  ``window`` it counts the calls the tenant's executions of that workflow made in the rolling
  window.

A budget is checked before each call: it is exhausted once ``max_calls`` calls were counted, or
once the counted cost reached ``max_cost`` (a call's cost is known only after it). Every call is
counted, also one whose answer was unreadable; a refused call is not made and not counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """At most ``max_calls`` model calls and ``max_cost`` (the providers' currency) per scope.

    ``None`` leaves a limit out; ``window`` makes the scope a rolling time window (see the module).
    """

    max_cost: float | None = None
    max_calls: int | None = None
    window: timedelta | None = None

    def __post_init__(self) -> None:
        if self.max_cost is None and self.max_calls is None:
            raise ValueError("a Budget needs max_cost, max_calls or both")
        if self.max_cost is not None and (not math.isfinite(self.max_cost) or self.max_cost < 0):
            raise ValueError("max_cost must be a finite number >= 0")
        if self.max_calls is not None and (isinstance(self.max_calls, bool) or self.max_calls < 0):
            raise ValueError("max_calls must be an int >= 0")
        if self.window is not None and self.window <= timedelta(0):
            raise ValueError("window must be a positive timedelta (or None)")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelPrice:
    """What a model costs per million tokens read (``input``) and written (``output``)."""

    input_per_million: float = 0.0
    output_per_million: float = 0.0

    def __post_init__(self) -> None:
        for value in (self.input_per_million, self.output_per_million):
            if not math.isfinite(value) or value < 0:
                raise ValueError("a model price must be a finite number >= 0")

    def cost(self, *, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Spend:
    """Model calls counted in a scope: how many, their tokens and their cost."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0

    def exhausts(self, budget: Budget) -> bool:
        """Whether the call about to be made breaks ``budget``.

        This spend already counts that call (at no cost yet): ``max_calls`` is broken when it is
        one call too many, ``max_cost`` when what was spent before it reached the limit.
        """
        if budget.max_calls is not None and self.calls > budget.max_calls:
            return True
        return budget.max_cost is not None and self.cost >= budget.max_cost
