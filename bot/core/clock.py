"""The one source of time. Durations are ``timedelta``; timers run on the clock.

``SystemClock`` uses the event loop; ``bot.testing.FakeClock`` moves only when told to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar, runtime_checkable

TimerCallback = Callable[[], Awaitable[None]]
T = TypeVar("T")


@runtime_checkable
class TimerHandle(Protocol):
    def cancel(self) -> None: ...


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """An aware UTC datetime."""
        ...

    async def sleep(self, duration: timedelta) -> None:
        """Return once ``duration`` has passed on this clock."""
        ...

    def call_every(self, interval: timedelta, callback: TimerCallback) -> TimerHandle:
        """Run ``callback`` every ``interval`` until the handle is cancelled."""
        ...


class _TaskTimer:
    def __init__(self, task: asyncio.Task[None]) -> None:
        self._task = task

    def cancel(self) -> None:
        self._task.cancel()


class SystemClock:
    """Wall-clock time; timers are asyncio tasks that are cancelled with their handle."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, duration: timedelta) -> None:
        await asyncio.sleep(max(duration.total_seconds(), 0.0))

    def call_every(self, interval: timedelta, callback: TimerCallback) -> TimerHandle:
        async def loop() -> None:
            while True:
                await asyncio.sleep(interval.total_seconds())
                await callback()

        return _TaskTimer(asyncio.get_running_loop().create_task(loop()))


async def wait_with_timeout(clock: Clock, awaitable: Awaitable[T], timeout: timedelta) -> T:
    """Await ``awaitable``, cut off after ``timeout`` on ``clock`` (raises ``TimeoutError``)."""
    work = asyncio.ensure_future(awaitable)
    timer = asyncio.ensure_future(clock.sleep(timeout))
    try:
        done, _ = await asyncio.wait({work, timer}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            return work.result()
        work.cancel()
        await asyncio.gather(work, return_exceptions=True)
        raise TimeoutError(f"timed out after {timeout}")
    finally:
        timer.cancel()
        await asyncio.gather(timer, return_exceptions=True)
