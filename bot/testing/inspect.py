"""``inspect_app(app)``: what a test reads of a running App beneath its public API.

Tests sometimes need what the public API does not show: the pause store (to answer a pause as
another instance would, or to read a record's status), the model-call ledger (what a reading
cost), the runtime the graph nodes see (to call a seam directly), or one pass over a tree. This
module is the one place that touches ``App``'s private attributes for them, so a change to how
``App`` keeps its parts is one edit here, not one in every test.

Read-mostly: every property reads through to the App's own objects (nothing copied or cached),
and the two actions, ``continue_tree`` and ``around_each_pass``, are what a second instance or a
slow pass would do. Not for production code: a running bot goes through ``App``'s methods.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from bot.app import App
from bot.runtime.engine import Engine, PassReport
from bot.runtime.frame import RunFrame
from bot.runtime.services import Runtime
from bot.runtime.tree_guard import Held, TreeGuard
from bot.store.ledger import SqlLedger
from bot.store.sql import SqlStore

T = TypeVar("T")


class AroundPass(Protocol):
    """Wraps one LangGraph pass over the tree ``root_execution_id``; must await ``run`` once
    and return what it returned."""

    def __call__(
        self, root_execution_id: str, run: Callable[[], Awaitable[T]], /
    ) -> Awaitable[T]: ...


@dataclass(frozen=True, slots=True)
class AppInspector:
    """A view into one running ``App`` for tests; build it with ``inspect_app(app)``."""

    app: App

    @property
    def store(self) -> SqlStore:
        """The pause and execution store the App's runtime writes to (an App's is SQL)."""
        store = self._runtime.store
        assert isinstance(store, SqlStore)
        return store

    @property
    def ledger(self) -> SqlLedger:
        """The ledger of model calls made by model reply interpreters (calls, tokens, cost)."""
        return self.app._reply_models.ledger

    @property
    def runtime(self) -> Runtime:
        """What the graph nodes see: store, clock, container and assembly."""
        return self._runtime

    @property
    def guard(self) -> TreeGuard:
        """What holds each tree in this process (its lock, its lease): ``is_busy_here``, and
        ``adopt_within`` for a test of a tree an answer opened and nobody continued."""
        return self._engine.guard

    async def continue_tree(self, root_execution_id: str) -> PassReport:
        """Run the passes over a tree whose pauses were resolved in the store only, as the drain
        of another instance would."""
        return await self._engine.continue_tree(root_execution_id)

    def around_each_pass(self, around: AroundPass) -> None:
        """Call every later LangGraph pass of this App through ``around`` (e.g. to count the
        passes that run at once on one tree); applies until the App closes."""
        engine = self._engine
        original = engine._run

        async def run(frame: RunFrame, graph_input: Any, held: Held[Any]) -> Any:
            return await around(frame.root_execution_id, lambda: original(frame, graph_input, held))

        engine._run = run  # type: ignore[method-assign]  # the one seam a pass goes through

    @property
    def _runtime(self) -> Runtime:
        return self.app._runtime

    @property
    def _engine(self) -> Engine:
        return self.app._engine


def inspect_app(app: App) -> AppInspector:
    """The inspector of ``app``: its store, ledger and runtime, for tests."""
    return AppInspector(app)
