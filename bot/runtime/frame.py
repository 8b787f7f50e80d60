"""The execution a LangGraph pass runs for, carried in the graph config to every node."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from langchain_core.runnables import RunnableConfig

from bot.core.context import ExecutionContext, StepContext, Tenant
from bot.store.records import PauseRecord

FRAME_KEY = "countersign_frame"
NOTHING_ANSWERED: Mapping[str, PauseRecord] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFrame:
    tenant_id: str
    owner_id: str
    execution_id: str
    root_execution_id: str
    thread_id: str
    workflow: str
    parent_execution_id: str | None = None
    item_index: int | None = None
    closes_at: datetime | None = None
    """When the pauses asked in this frame close by themselves: the earliest deadline of the
    quorum launches it runs under."""
    answered: Mapping[str, PauseRecord] = field(
        default_factory=lambda: NOTHING_ANSWERED, compare=False, repr=False
    )
    """The pauses this pass continues, by idempotency key, as read when it began: a resumed
    step starts from its record here instead of reading it again (it still takes the answer
    with an atomic RESOLVED → TAKEN, so a stale copy can never answer twice)."""
    took: list[PauseRecord] = field(default_factory=list, compare=False, repr=False)
    """The answers the steps of this call's passes took (RESOLVED → TAKEN), as recorded: one
    list shared by every frame derived from the call's (branches, children, later passes), so
    the call that took an answer tells its channel, however the step came to take it."""
    held_results: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """What the approved tools that ran in this call's passes returned, by pause id, not yet
    saved: shared like ``took``. Each rides on its pass's last write (``rest`` or ``end_tree``),
    or is saved by itself when the pass ends otherwise (``Engine``); meanwhile LangGraph's own
    write of the tool's task keeps the tool from running again."""

    def answering(self, records: Iterable[PauseRecord]) -> RunFrame:
        """This frame for a pass that continues ``records``."""
        by_key = {r.idempotency_key: r for r in records}
        return dataclasses.replace(self, answered=MappingProxyType(by_key))

    @property
    def child_execution_id(self) -> str | None:
        """This execution's id when it is a child (a workflow run as a step), else None."""
        return None if self.execution_id == self.root_execution_id else self.execution_id

    def context(self, step: StepContext | None = None) -> ExecutionContext:
        return ExecutionContext(
            tenant=Tenant(tenant_id=self.tenant_id),
            owner_id=self.owner_id,
            execution_id=self.execution_id,
            root_execution_id=self.root_execution_id,
            thread_id=self.thread_id,
            step=step,
        )

    def graph_config(self, **extra: Any) -> RunnableConfig:
        """The config of a pass: LangGraph's thread is the root execution."""
        return {
            "configurable": {"thread_id": self.root_execution_id, FRAME_KEY: self, **extra},
            "recursion_limit": 1000,
        }


class ClosedByDeadline(Exception):
    """A branch reached a pause after the deadline it runs under (``closes_at``): the question
    is not asked (or, asked before, is withdrawn by the launch whose deadline it is)."""

    def __init__(self, closes_at: datetime) -> None:
        super().__init__(f"the deadline {closes_at.isoformat()} has passed")
        self.closes_at = closes_at


def frame_of(config: RunnableConfig) -> RunFrame:
    frame = config.get("configurable", {}).get(FRAME_KEY)
    if not isinstance(frame, RunFrame):
        raise RuntimeError("a Countersign node ran outside a Countersign pass")
    return frame


def checkpoint_ns(config: RunnableConfig) -> str:
    """The task's checkpoint namespace: identical on every re-run of an unfinished task."""
    ns = config.get("configurable", {}).get("checkpoint_ns")
    if not isinstance(ns, str) or not ns:
        raise RuntimeError("the task has no checkpoint namespace")
    return ns
