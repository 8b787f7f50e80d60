"""The execution frame a tool, channel or interpreter runs in (injected, never global)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Tenant:
    tenant_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StepContext:
    """The waiting or running step: its graph node, the tool call and its idempotency key."""

    node_id: str
    call_id: str | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionContext:
    tenant: Tenant
    owner_id: str
    execution_id: str
    root_execution_id: str
    thread_id: str
    step: StepContext | None = None
