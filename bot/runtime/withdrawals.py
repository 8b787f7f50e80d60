"""Telling a channel about its question outside ``send``: that it closed without an answer
(``withdraw``), a reminder, an escalation; once, best-effort."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from datetime import timedelta

from bot.components.decorators import DEFAULT_TOOL_TIMEOUT
from bot.components.specs import ChannelSpec
from bot.core.channel import ChannelOf, ChannelWithdrawal
from bot.core.clock import wait_with_timeout
from bot.core.context import StepContext
from bot.core.enums import PauseResolution
from bot.core.tracing import span
from bot.runtime.frame import RunFrame
from bot.runtime.services import Runtime, log
from bot.store.records import PauseRecord


def frame_of_pause(record: PauseRecord, workflow: str = "") -> RunFrame:
    return RunFrame(
        tenant_id=record.tenant_id,
        owner_id=record.owner_id,
        execution_id=record.execution_id,
        root_execution_id=record.root_execution_id,
        thread_id=record.thread_id,
        workflow=workflow,
    )


def _channel_class(runtime: Runtime, record: PauseRecord) -> type | None:
    for cls, spec in runtime.assembly.channels.items():
        if isinstance(spec, ChannelSpec) and spec.name == record.channel:
            return cls
    return None


def _timeout_of(runtime: Runtime, record: PauseRecord) -> timedelta:
    binding = runtime.assembly.binding_of(record.ask.tool, agent=record.agent, role=record.role)
    return DEFAULT_TOOL_TIMEOUT if binding is None else binding.spec.timeout


async def withdraw(
    runtime: Runtime,
    record: PauseRecord,
    resolution: PauseResolution,
    *,
    cancelled_by: str | None = None,
) -> None:
    """Call the channel's ``withdraw`` in the pause's execution frame, under the tool's timeout
    (``cancelled_by``: who stopped the run, told to the channel).

    A failure or a timeout is one warning (``channel.withdraw-failed``) and nothing else.
    """
    runtime.metrics.withdrawn(resolution.value)
    withdrawal = ChannelWithdrawal(
        pause_id=record.pause_id,
        value=record.ask,
        resolution=resolution,
        role=record.role,
        tenant_id=record.tenant_id,
        owner_id=record.owner_id,
        agent=record.agent,
        thread_id=record.thread_id,
        execution_id=record.execution_id,
        cancelled_by=cancelled_by,
    )
    await tell_channel(runtime, record, "withdraw", lambda channel: channel.withdraw(withdrawal))


async def tell_channel(
    runtime: Runtime,
    record: PauseRecord,
    verb: str,
    call: Callable[[ChannelOf], object],
) -> bool:
    """Call one of the channel's optional methods (``withdraw``, ``remind``, ``escalate``) in
    the pause's execution frame, under the tool's timeout; whether it returned.

    A failure or a timeout is one warning (``channel.<verb>-failed``) and nothing else.
    """
    cls = _channel_class(runtime, record)
    if cls is None:
        return False
    step = StepContext(
        node_id=record.node_id, call_id=record.ask.call_id, idempotency_key=record.idempotency_key
    )
    context = frame_of_pause(record).context(step)
    try:
        channel: ChannelOf = runtime.container.create(cls, context)
        with span(f"channel.{verb}", role=record.role):
            result = call(channel)
            if inspect.isawaitable(result):
                await wait_with_timeout(runtime.clock, result, _timeout_of(runtime, record))
    except Exception as error:  # best-effort by contract: log and go on
        log.warning(
            "channel.%s-failed: %s (execution_id=%s tenant_id=%s channel=%s)",
            verb,
            type(error).__name__,
            record.execution_id,
            record.tenant_id,
            record.channel,
            extra={
                "execution_id": record.execution_id,
                "tenant_id": record.tenant_id,
                "role": record.role,
                "channel": record.channel,
                "outcome": "withdraw-failed",
            },
        )
        return False
    return True
