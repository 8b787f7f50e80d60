"""One pass per tree: an in-process lock, then the tree's lease (several instances).

A caller that finds the lease held waits for the holder's pass to end (it re-tries the lease
briefly, in real time; the expiry is judged on the application's clock) and takes it over if
the holder's lease expires meanwhile. While a pass runs, its lease is renewed.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator
from datetime import datetime, timedelta

from bot.core.clock import Clock
from bot.runtime.services import log
from bot.store.leases import SqlLeases

LEASE_TTL = timedelta(seconds=60)
RETRY_SECONDS = 0.02
RENEW_SECONDS = 10.0


class TreeGuard:
    def __init__(
        self, leases: SqlLeases, clock: Clock, owner: str, ttl: timedelta = LEASE_TTL
    ) -> None:
        self._leases = leases
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

    @contextlib.asynccontextmanager
    async def hold(self, root: str) -> AsyncIterator[None]:
        """Hold the tree: the in-process lock, then the lease, renewed until the block ends."""
        async with self.lock(root):
            # another instance holds it: its pass ends (or its lease expires) soon; no event
            # crosses processes, so try again shortly
            while not await self._leases.try_take(root, self._owner, self._clock.now(), self._ttl):  # noqa: ASYNC110
                await asyncio.sleep(RETRY_SECONDS)
            renewal = asyncio.ensure_future(self._renew(root))
            try:
                yield
            finally:
                renewal.cancel()
                await asyncio.gather(renewal, return_exceptions=True)
                await asyncio.shield(self._leases.release(root, self._owner))

    async def _renew(self, root: str) -> None:
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            if not await self._leases.renew(root, self._owner, self._clock.now(), self._ttl):
                log.error("lease.lost: another instance took over execution %s during a pass", root)
                return
