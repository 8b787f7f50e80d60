"""One pass per tree: an in-process lock, then the tree's lease (several instances).

A caller that finds the lease held waits for the holder's pass to end (it re-tries the lease
briefly, in real time; the expiry is judged on the application's clock) and takes it over if
the holder's lease expires meanwhile. Waits (``countersign_lease_waits``) and takeovers of an
expired lease (``countersign_lease_takeovers``) are counted apart. While a pass runs, its
lease is renewed.

The lease is taken by the pass's first store call (``opening``: it takes the lease and reads or
writes what the pass starts from, in one transaction) and usually given up by its last one
(``Held.claim`` passed to ``rest``/``end_tree``, then ``Held.released``); whatever is still
held when the block ends is given up then.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from bot.core.clock import Clock
from bot.core.metrics import Metrics
from bot.runtime.services import log
from bot.store.interruptions import is_interruption
from bot.store.leases import LeaseClaim
from bot.store.repositories import Leases

LEASE_TTL = timedelta(seconds=8)
"""Short, so a tree whose instance died is taken over soon; renewed every RENEW_SECONDS while a
pass runs (four renewals would have to fail for a live holder to lose it)."""
RETRY_SECONDS = 0.02
RENEW_SECONDS = 2.0

T = TypeVar("T")


@dataclass(slots=True, kw_only=True)
class Held(Generic[T]):
    """A tree held by this caller: what the opening call returned, and the lease's claim."""

    claim: LeaseClaim
    opened: T
    released: bool = False


def root_of(held: Held[T]) -> str:
    return held.claim.root


class TreeGuard:
    def __init__(
        self,
        leases: Leases,
        clock: Clock,
        owner: str,
        ttl: timedelta = LEASE_TTL,
        *,
        metrics: Metrics | None = None,
    ) -> None:
        self._leases = leases
        self._metrics = metrics
        self._clock = clock
        self._owner = owner
        self._ttl = ttl
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    @property
    def owner(self) -> str:
        return self._owner

    @property
    def ttl(self) -> timedelta:
        return self._ttl

    async def live_roots(self, now: datetime) -> set[str]:
        return await self._leases.live_roots(now)

    def lock(self, root: str) -> asyncio.Lock:
        lock = self._locks.get(root)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[root] = lock
        return lock

    def is_busy_here(self, root: str) -> bool:
        lock = self._locks.get(root)
        return lock is not None and lock.locked()

    def claim(self, root: str) -> LeaseClaim:
        return LeaseClaim(
            root, self._owner, self._clock.now(), self._ttl, on_takeover=self._took_over
        )

    def _took_over(self) -> None:
        """Counted apart from the waits: a takeover means an instance died or stalled mid-pass
        (counted when taken, in the taking transaction)."""
        if self._metrics is not None:
            self._metrics.lease_taken_over()

    @contextlib.asynccontextmanager
    async def hold(
        self, root: str, opening: Callable[[LeaseClaim], Awaitable[T | None]]
    ) -> AsyncIterator[Held[T]]:
        """Hold the tree: the in-process lock, then the lease, renewed until the block ends.

        ``opening`` takes the lease with the claim it is given (None: it is held elsewhere, try
        again), together with whatever the pass starts from; it must be safe to repeat.
        """
        async with self.lock(root):
            # another instance holds it: its pass ends (or its lease expires) soon; no event
            # crosses processes, so try again shortly
            waited = False
            while True:
                claim = self.claim(root)
                opened = await opening(claim)
                if opened is not None:
                    break
                if not waited and self._metrics is not None:
                    self._metrics.lease_waits.inc()
                waited = True
                await asyncio.sleep(RETRY_SECONDS)
            async with self._renewed(Held(claim=claim, opened=opened)) as held:
                yield held

    @contextlib.asynccontextmanager
    async def try_hold(self, root: str) -> AsyncIterator[bool]:
        """Hold the tree only if it is free now, without waiting; yields whether it is held.

        For work done beside the passes (the sweep's reminders and escalations): a pass
        running here or on another instance means trying again on the sweep's next tick.
        """
        lock = self.lock(root)
        if lock.locked():  # no await between this check and taking the lock
            yield False
            return
        async with lock:
            claim = self.claim(root)
            if not await self._leases.try_take(claim):
                yield False
                return
            async with self._renewed(Held(claim=claim, opened=None)):
                yield True

    @contextlib.asynccontextmanager
    async def _renewed(self, held: Held[T]) -> AsyncIterator[Held[T]]:
        """Renew ``held``'s lease until the block ends, then give it up if still held.

        The renewing task starts only once a pass has run ``RENEW_SECONDS`` (a timer until
        then): most passes end well before, and a task made and cancelled for each was a
        measurable part of a short pass's own cost."""
        renewal: list[asyncio.Task[None]] = []

        def start() -> None:
            renewal.append(asyncio.ensure_future(self._renew(held)))

        timer = asyncio.get_running_loop().call_later(RENEW_SECONDS, start)
        try:
            yield held
        finally:
            timer.cancel()
            for task in renewal:
                task.cancel()
            await asyncio.gather(*renewal, return_exceptions=True)
            if not held.released:
                held.released = True
                try:
                    await self._leases.release(held.claim)
                except Exception as error:
                    if not is_interruption(error):
                        raise
                    # the database went away: the lease expires within its ttl instead
                    log.warning(
                        "lease.unreleased: %s (root=%s)", type(error).__name__, root_of(held)
                    )

    async def _renew(self, held: Held[T]) -> None:
        try:
            await self._renew_until_released(held)
        except Exception as error:  # the database went away: the lease may lapse, the pass
            if not is_interruption(error):  # goes on (its own writes meet the same failure)
                raise
            log.warning("lease.renewal-failed: %s (root=%s)", type(error).__name__, root_of(held))

    async def _renew_until_released(self, held: Held[T]) -> None:
        """Renew now (``RENEW_SECONDS`` into the pass), then every ``RENEW_SECONDS``."""
        root = held.claim.root
        while True:
            if held.released:
                return
            if not await self._leases.renew(self.claim(root)):
                if held.released:  # the pass's last write gave it up while this renewal ran
                    return
                if self._metrics is not None:
                    self._metrics.leases_lost.inc()
                log.error("lease.lost: another instance took over execution %s during a pass", root)
                return
            await asyncio.sleep(RENEW_SECONDS)
