"""A clock that moves only when told: ``await clock.advance(timedelta)`` runs what fell due."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot.core.clock import TimerCallback, TimerHandle

START = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


@dataclass(order=True)
class _Due:
    at: datetime
    order: int
    timer: _Timer | None = field(compare=False, default=None)
    sleeper: asyncio.Future[None] | None = field(compare=False, default=None)


class _Timer:
    def __init__(self, interval: timedelta, callback: TimerCallback) -> None:
        self.interval = interval
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """Deterministic time for tests. Starts at 2026-01-01 09:00 UTC."""

    def __init__(self) -> None:
        self._now = START
        self._queue: list[_Due] = []
        self._order = itertools.count()

    def now(self) -> datetime:
        return self._now

    async def sleep(self, duration: timedelta) -> None:
        if duration <= timedelta(0):
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._queue, _Due(self._now + duration, next(self._order), sleeper=future))
        await future

    def call_every(self, interval: timedelta, callback: TimerCallback) -> TimerHandle:
        if interval <= timedelta(0):
            raise ValueError("a timer's interval must be positive")
        timer = _Timer(interval, callback)
        heapq.heappush(self._queue, _Due(self._now + interval, next(self._order), timer=timer))
        return timer

    async def advance(self, delta: timedelta) -> None:
        """Move time by ``delta``, running every timer and waking every sleeper that fell due."""
        if delta < timedelta(0):
            raise ValueError("time does not go back")
        target = self._now + delta
        while self._queue and self._queue[0].at <= target:
            due = heapq.heappop(self._queue)
            self._now = due.at
            if due.sleeper is not None:
                if not due.sleeper.done():
                    due.sleeper.set_result(None)
                await asyncio.sleep(0)
            elif due.timer is not None and not due.timer.cancelled:
                # a periodic timer that fell due many times runs once, at its last due time
                # before the next sleeper wakes (a sweep after a long advance, not thousands;
                # other timers do not hold it back: two Apps on one clock tick once each)
                limit = min(
                    (d.at for d in self._queue if d.sleeper is not None and not d.sleeper.done()),
                    default=target,
                )
                limit = min(limit, target)
                due.at += max((limit - due.at) // due.timer.interval, 0) * due.timer.interval
                self._now = due.at
                await due.timer.callback()
                heapq.heappush(
                    self._queue,
                    _Due(due.at + due.timer.interval, next(self._order), timer=due.timer),
                )
        self._now = target
        await asyncio.sleep(0)
