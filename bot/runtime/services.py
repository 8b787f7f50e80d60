"""What the graph nodes need from the App, gathered in one object (no globals)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.core.clock import Clock
from bot.core.metrics import Metrics
from bot.runtime.assembly import Assembly
from bot.runtime.container import Container
from bot.store.repositories import Delegations, Grants, PauseStore, ToolRuns

log = logging.getLogger("countersign")


@dataclass(frozen=True, slots=True, kw_only=True)
class Runtime:
    store: PauseStore
    clock: Clock
    container: Container
    assembly: Assembly
    metrics: Metrics
    tool_runs: ToolRuns
    """The runs of attached graphs' tools (``bot.runtime.attached_tools``)."""
    grants: Grants
    """Standing grants (``bot.runtime.grant_checks`` uses them before a question is sent)."""
    delegations: Delegations
    """Standing delegations (``bot.runtime.handovers`` reads them when someone answers)."""
