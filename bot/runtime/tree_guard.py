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

An answer may open the tree in its own write (issue 32: one write less per click): the
answering caller takes the in-process lock only if it is free now (``lock_now``), its write
takes the lease and opens the tree with the answer (``PauseStore.close_opening``), and the tree
is kept held (``keep``: renewed from then on) until a continuation adopts it (``hold(...,
adopt=True)``) — or, never adopted within ``ADOPT_WITHIN``, given up (lease, then lock): the
tree, RUNNING with an answer nobody took, is the recovery sweep's once its lease is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

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
ADOPT_WITHIN = timedelta(seconds=30)
"""How long a tree an answer's write opened stays held for the continuation that follows it
(Slack's after-ack queue may hold that back, bounded by its own patience): a caller of
``App.answer(..., continue_run=False)`` who never continues must not keep the tree from the
other passes of this process, nor from recovery, for longer."""

T = TypeVar("T")


@dataclass(slots=True, kw_only=True)
class Held(Generic[T]):
    """A tree held by this caller: what the opening call returned, and the lease's claim."""

    claim: LeaseClaim
    opened: T
    released: bool = False


def root_of(held: Held[T]) -> str:
    return held.claim.root


@dataclass(slots=True, kw_only=True)
class _Renewal:
    """A held tree's lease renewed until ``stop``: by a timer until the hold has lasted
    ``RENEW_SECONDS`` (most passes end well before, and a task made and cancelled for each was
    a measurable part of a short pass's own cost), then by a task."""

    held: Held[Any]
    until: datetime
    """When the lease expires, as last taken or renewed (on the application's clock)."""
    lost: bool = False
    """A renewal found the lease taken over."""
    timer: asyncio.TimerHandle | None = None
    tasks: list[asyncio.Task[None]] = dataclasses.field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class _Kept:
    """A tree an answer's write opened, held (its lock and lease) until a pass adopts it."""

    renewal: _Renewal
    lock: asyncio.Lock
    bound: asyncio.TimerHandle
    stale: bool = False
    """An answer was recorded beside it since (``answered_beside``): open the tree again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Locked:
    """A tree's in-process lock taken by ``lock_now`` (kept here: the guard keeps its locks
    only weakly), and the claim to take its lease with."""

    lock: asyncio.Lock
    claim: LeaseClaim


def _free_now(lock: asyncio.Lock) -> bool:
    """Whether ``acquire`` takes ``lock`` at once, without suspending: unlocked, and nobody
    waits for it (a lock just released may have a waiter about to wake and take it: asyncio
    keeps its waiters private, so any waiter counts as busy — at worst an answer falls back)."""
    return not lock.locked() and not getattr(lock, "_waiters", None)


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
        self._kept: dict[str, _Kept] = {}
        self._giving_up: set[asyncio.Task[None]] = set()
        self.adopt_within = ADOPT_WITHIN

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
        self,
        root: str,
        opening: Callable[[LeaseClaim], Awaitable[T | None]],
        *,
        adopt: bool = False,
    ) -> AsyncIterator[Held[T]]:
        """Hold the tree: the in-process lock, then the lease, renewed until the block ends.

        ``opening`` takes the lease with the claim it is given (None: it is held elsewhere, try
        again), together with whatever the pass starts from; it must be safe to repeat.
        ``adopt``: a tree an answer's write opened and ``keep`` holds is taken over as it is
        (what it opened must be what ``opening`` returns: ``open_tree`` without ``moving``).
        """
        kept = self._kept.pop(root, None) if adopt else None
        if kept is not None:
            kept.bound.cancel()
            if self._lapsed(kept):
                # not renewed in time (a stalled loop; a test's clock moved on): another
                # instance may have taken the lease over, so hold the tree as anyone would
                await self._give_up(kept)
                kept = None
        if kept is None:
            async with self.lock(root), self._opened(root, opening) as held:
                yield held
            return
        try:
            if kept.stale:  # answered here since it was opened: open it again, still held
                kept.renewal.held.released = True  # the lease stays ours: taken again now
                await self._stop(kept.renewal)
                async with self._opened(root, opening) as held:
                    yield held
            else:
                try:
                    yield kept.renewal.held
                finally:
                    await self._stop(kept.renewal)
        finally:
            kept.lock.release()

    @contextlib.asynccontextmanager
    async def _opened(
        self, root: str, opening: Callable[[LeaseClaim], Awaitable[T | None]]
    ) -> AsyncIterator[Held[T]]:
        """Take the lease with ``opening`` (the lock held), renewed until the block ends."""
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

    def answered_beside(self, root: str) -> None:
        """An answer to a pause of ``root`` was recorded alone (the tree busy here): if a tree
        kept for a continuation holds it, what it opened misses that answer, and a continuation
        that adopts it opens it again (the lease still held) — the answer's own continuation
        may be that one (``App.continue_answers`` moves each tree once)."""
        kept = self._kept.get(root)
        if kept is not None:
            kept.stale = True

    async def lock_now(self, root: str) -> Locked | None:
        """Take the tree's in-process lock if it is free now, without waiting, with the claim
        to take its lease with (then ``keep`` or ``unlock``); None if a pass holds it here."""
        lock = self.lock(root)
        if not _free_now(lock):
            return None
        await lock.acquire()  # free and nobody waits: taken at once, without suspending
        return Locked(lock=lock, claim=self.claim(root))

    def unlock(self, locked: Locked) -> None:
        """Give up a lock ``lock_now`` took, no tree opened with it (its lease not taken)."""
        locked.lock.release()

    def keep(self, locked: Locked, opened: object) -> None:
        """Hold the tree ``locked``'s claim opened (its lease taken) for the pass that adopts
        it (``hold(..., adopt=True)``); renewed from now; given up if none adopts it within
        ``adopt_within``."""
        root = locked.claim.root
        renewal = self._start(Held(claim=locked.claim, opened=opened))
        bound = asyncio.get_running_loop().call_later(
            self.adopt_within.total_seconds(), self._not_adopted, root
        )
        self._kept[root] = _Kept(renewal=renewal, lock=locked.lock, bound=bound)

    def _lapsed(self, kept: _Kept) -> bool:
        return kept.renewal.lost or kept.renewal.until < self._clock.now()

    async def give_up_lapsed(self) -> None:
        """Give up the trees kept for a continuation whose lease was not renewed in time (a
        stalled loop; a test's clock moved on): recovery may take them over now, from here or
        from another instance, instead of waiting for ``adopt_within``."""
        for root, kept in list(self._kept.items()):
            if self._kept.get(root) is kept and self._lapsed(kept):
                del self._kept[root]
                kept.bound.cancel()
                await self._give_up(kept)

    def _not_adopted(self, root: str) -> None:
        kept = self._kept.pop(root, None)
        if kept is None:
            return
        log.warning("lease.not-adopted: execution %s left to the recovery sweep", root)
        task = asyncio.ensure_future(self._give_up(kept))
        self._giving_up.add(task)
        task.add_done_callback(self._giving_up.discard)

    async def _give_up(self, kept: _Kept) -> None:
        """The lease first, then the lock: a pass of this process taking the lock meanwhile
        would hold the same owner's lease, which the release would then delete."""
        try:
            await self._stop(kept.renewal)
        finally:
            kept.lock.release()

    async def close(self) -> None:
        """Give up every tree kept for a pass that never adopted it (before the database
        closes); repeatable."""
        while self._kept:
            _, kept = self._kept.popitem()
            kept.bound.cancel()
            await self._give_up(kept)
        await asyncio.gather(*self._giving_up, return_exceptions=True)

    @contextlib.asynccontextmanager
    async def try_hold(self, root: str) -> AsyncIterator[bool]:
        """Hold the tree only if it is free now, without waiting; yields whether it is held.

        For work done beside the passes (the sweep's reminders and escalations): a pass
        running here or on another instance means trying again on the sweep's next tick.
        """
        lock = self.lock(root)
        if not _free_now(lock):  # no await between this check and taking the lock
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
        """Renew ``held``'s lease until the block ends, then give it up if still held."""
        renewal = self._start(held)
        try:
            yield held
        finally:
            await self._stop(renewal)

    def _start(self, held: Held[Any]) -> _Renewal:
        renewal = _Renewal(held=held, until=held.claim.now + held.claim.ttl)

        def start() -> None:
            renewal.tasks.append(asyncio.ensure_future(self._renew(renewal)))

        renewal.timer = asyncio.get_running_loop().call_later(RENEW_SECONDS, start)
        return renewal

    async def _stop(self, renewal: _Renewal) -> None:
        """Stop renewing; give the lease up if the pass's last write did not."""
        held = renewal.held
        if renewal.timer is not None:
            renewal.timer.cancel()
        for task in renewal.tasks:
            task.cancel()
        await asyncio.gather(*renewal.tasks, return_exceptions=True)
        if not held.released:
            held.released = True
            try:
                await self._leases.release(held.claim)
            except Exception as error:
                if not is_interruption(error):
                    raise
                # the database went away: the lease expires within its ttl instead
                log.warning("lease.unreleased: %s (root=%s)", type(error).__name__, root_of(held))

    async def _renew(self, renewal: _Renewal) -> None:
        held = renewal.held
        try:
            await self._renew_until_released(renewal)
        except Exception as error:  # the database went away: the lease may lapse, the pass
            if not is_interruption(error):  # goes on (its own writes meet the same failure)
                raise
            log.warning("lease.renewal-failed: %s (root=%s)", type(error).__name__, root_of(held))

    async def _renew_until_released(self, renewal: _Renewal) -> None:
        """Renew now (``RENEW_SECONDS`` into the pass), then every ``RENEW_SECONDS``."""
        held = renewal.held
        root = held.claim.root
        while True:
            if held.released:
                return
            claim = self.claim(root)
            if await self._leases.renew(claim):
                renewal.until = claim.now + claim.ttl
            else:
                if held.released:  # the pass's last write gave it up while this renewal ran
                    return
                renewal.lost = True
                if self._metrics is not None:
                    self._metrics.leases_lost.inc()
                log.error("lease.lost: another instance took over execution %s during a pass", root)
                return
            await asyncio.sleep(RENEW_SECONDS)
