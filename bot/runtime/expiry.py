"""A question nobody answered in time: when it expires, closing it as EXPIRED, and what its
asker gets — for our own steps (``bot.runtime.seam``, ``bot.runtime.tool_calls``) and an attached
graph's questions (``bot.runtime.attached_graphs``) alike."""

from __future__ import annotations

from datetime import datetime

from bot.core.enums import PauseResolution
from bot.core.errors import PauseExpiredError
from bot.core.timing import OnExpiry, PauseTiming
from bot.runtime.assembly import ToolBinding
from bot.runtime.services import Runtime
from bot.runtime.withdrawals import withdraw
from bot.store.closings import Expired
from bot.store.records import PauseRecord


def expires_at(binding: ToolBinding, asked_at: datetime) -> datetime | None:
    """When a question asked at ``asked_at`` about ``binding``'s tool expires (its tool's or
    its role's timing), if it does."""
    timing = binding.timing
    if timing is None or timing.expire_after is None:
        return None
    return asked_at + timing.expire_after


def timing_of(binding: ToolBinding | None, record: PauseRecord) -> PauseTiming | None:
    """The timing ``record`` is asked on: where a policy routed it, its route's; else its
    tool's or role's (``binding``'s)."""
    if record.route is not None and record.route.timing is not None:
        return record.route.timing
    return None if binding is None else binding.timing


def expiry_of(binding: ToolBinding | None, record: PauseRecord) -> datetime | None:
    """When ``record`` expires (its route's timing, else its tool's or role's), if it does."""
    timing = timing_of(binding, record)
    return None if timing is None else timing.expires_at(record.asked_at)


def is_due(runtime: Runtime, binding: ToolBinding, record: PauseRecord) -> bool:
    """Whether ``record``'s expiry has come."""
    expiry = expiry_of(binding, record)
    return expiry is not None and runtime.clock.now() >= expiry


async def expire(runtime: Runtime, record: PauseRecord) -> PauseRecord | None:
    """Close a waiting question as EXPIRED and tell its channel (once: only the closer that
    closed it does); None if it did not wait any more (answered or closed meanwhile)."""
    closed = await runtime.store.close(record.pause_id, Expired(), at=runtime.clock.now())
    if closed is not None and closed.is_sent:
        await withdraw(runtime, closed, PauseResolution.EXPIRED)
    return closed


def nobody_in_time(
    binding: ToolBinding, tool: str, at: datetime | None, *, execution_id: str
) -> str:
    """What the asker reads of a call nobody approved in time (and when it expired); raises
    ``PauseExpiredError`` instead when the timing says the step fails (``OnExpiry.FAIL``)."""
    when = "" if at is None else f" (it expired at {at.isoformat()})"
    said = f"nobody approved the call to {tool} in time{when}; it did not run"
    timing = binding.timing
    if timing is not None and timing.on_expiry is OnExpiry.FAIL:
        raise PauseExpiredError(said, execution_id=execution_id)
    return said
