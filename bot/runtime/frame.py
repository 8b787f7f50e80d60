"""The execution a LangGraph pass runs for, carried in the graph config to every node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from bot.core.context import ExecutionContext, StepContext, Tenant

FRAME_KEY = "countersign_frame"


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
