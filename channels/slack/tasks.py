"""The bot's background work (resumes after an ack, posts, home refreshes), kept and awaited.

Bolt runs a listener's code after ``ack()`` in a task nobody keeps; a shutdown could cut it
off after Slack got its 200. Our listeners ack, then hand the work to :class:`BackgroundTasks`,
which keeps every task, logs its failure, and on ``close`` waits for them (bounded) and cancels
what is left.

Acks come first. An ack has a deadline (Slack gives up after 3 s); the work behind it has none.
Both share one event loop, so work waits while requests are being acked (:class:`AckFirst`);
when acks keep coming for longer than ``patience``, work goes on one piece at a time until
they stop. A request's store calls go ahead of those the running work queued
(``bot.store.transactions.calls_ahead``). At most ``max_running`` pieces of work run at once,
started in the order they were handed over (a burst of clicks does not start a burst of runs:
``DEFAULT_MAX_RUNNING``). Urgent work — opening a modal, whose ``trigger_id`` expires 3 s
after the click — skips both.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
from collections.abc import Callable, Coroutine, Hashable, Iterator
from datetime import timedelta
from typing import Any, Final

from langgraph.errors import GraphInterrupt

from bot.store.transactions import calls_ahead
from channels.slack.redaction import log

DEFAULT_PATIENCE: Final = timedelta(seconds=1)
DEFAULT_MAX_RUNNING: Final = 32
"""A burst of 500 clicks starts at most 32 runs at once, then each as one ends (in the order
they were acked). The pieces mostly wait (the database's threads, Slack's Web API): with 8 at
once the bot used under half a core while 50 clicks' runs queued behind them (issue 32). What
writes at once stays bounded by the store itself, not by this: a SQLite file's 4 worker threads
(``bot.store.transactions``) and the checkpointer's one connection, PostgreSQL's pool of 10 + 20
connections, a run holding one only for the length of a store call. And a request being acked
no longer waits behind the calls this work queued: its calls go ahead (``AckFirst.acking``)."""
_SETTLE_ROUNDS: Final = 5  # loop turns to let a just-acked listener hand its work over


class AckFirst:
    """Counts the requests being acked; work waits for a quiet moment, at most ``patience``."""

    def __init__(self, patience: timedelta = DEFAULT_PATIENCE) -> None:
        self._patience = patience.total_seconds()
        self._acking = 0
        self._quiet = asyncio.Event()
        self._quiet.set()

    @contextlib.contextmanager
    def acking(self) -> Iterator[None]:
        """Around the handling of one request, up to its response: its store calls go ahead
        of those the work already running queued (``calls_ahead``)."""
        self._acking += 1
        self._quiet.clear()
        try:
            with calls_ahead():
                yield
        finally:
            self._acking -= 1
            if self._acking == 0:
                self._quiet.set()

    @property
    def crowded(self) -> bool:
        """Whether other requests are being acked beside the one asking (a burst): work on
        the acks' path is better left to after them (``App.answer(open_tree=False)``)."""
        return self._acking > 1

    async def quiet(self) -> bool:
        """Wait until no request is being acked (``True``), or ``patience`` has passed."""
        if self._quiet.is_set():
            return True
        try:
            await asyncio.wait_for(self._quiet.wait(), self._patience)
        except TimeoutError:
            return False
        return True


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class _Slots:
    """``n`` pieces of work at once; a slot freed goes to the oldest piece waiting, one that
    can wait (``later``) only when no other waits."""

    def __init__(self, n: int) -> None:
        self._free = n
        self._now: collections.deque[asyncio.Future[None]] = collections.deque()
        self._later: collections.deque[asyncio.Future[None]] = collections.deque()

    async def acquire(self, *, later: bool) -> None:
        if self._free > 0:  # nobody waits while a slot is free: freed slots are handed over
            self._free -= 1
            return
        handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting = self._later if later else self._now
        waiting.append(handed)
        try:
            await handed
        except asyncio.CancelledError:
            if handed.done() and not handed.cancelled():
                self.release()  # handed a slot, cancelled before it ran: pass it on
            else:
                with contextlib.suppress(ValueError):  # release() may have dropped it
                    waiting.remove(handed)
            raise

    def release(self) -> None:
        for waiting in (self._now, self._later):
            while waiting:
                handed = waiting.popleft()
                if not handed.done():
                    handed.set_result(None)
                    return
        self._free += 1


class _Once(enum.Enum):
    WAITING = "waiting"  # spawned, not started: it will read the state when it starts
    RUNNING = "running"  # started: what changes now may not be in what it shows
    AGAIN = "again"  # running, and asked for again meanwhile: one more after it


class BackgroundTasks:
    """A set of running tasks; refuses new work once closed."""

    def __init__(
        self, *, gate: AckFirst | None = None, max_running: int = DEFAULT_MAX_RUNNING
    ) -> None:
        self.gate = gate or AckFirst()
        self._slots = _Slots(max_running)
        self._busy_lane = asyncio.Semaphore(1)
        self._tasks: set[asyncio.Task[None]] = set()
        self._once: dict[Hashable, _Once] = {}
        self._state = _State.OPEN

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def closed(self) -> bool:
        return self._state is _State.CLOSED

    def spawn(
        self,
        work: Coroutine[Any, Any, object],
        *,
        name: str,
        urgent: bool = False,
        later: bool = False,
    ) -> asyncio.Task[None] | None:
        """Run ``work`` in a kept task; ``None`` (and the work dropped) after ``close``.
        ``later``: work that can wait (a Home republished) starts only when no other work
        waits to start (a click's run continued)."""
        if self._state is _State.CLOSED:
            work.close()
            log.warning("slack: %s dropped: the bot is shutting down", name)
            return None
        runner = self._guarded(work, name) if urgent else self._in_turn(work, name, later)
        task = asyncio.get_running_loop().create_task(runner, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def spawn_once(
        self,
        key: Hashable,
        make: Callable[[], Coroutine[Any, Any, object]],
        *,
        name: str,
        spacing: timedelta = timedelta(0),
    ) -> None:
        """Work that shows the state as it is when it runs (a person's Home republished), as
        work that can wait (``later``), once however often it is asked for: asked while it
        waits to start, it is the same piece (it reads the state when it starts); asked while
        it runs, one more piece follows it (the state may have changed after it read it),
        no sooner than ``spacing`` after the running one started."""
        state = self._once.get(key)
        if state is _Once.WAITING or state is _Once.AGAIN:
            return
        if state is _Once.RUNNING:
            self._once[key] = _Once.AGAIN
            return
        self._once[key] = _Once.WAITING
        if self.spawn(self._run_once(key, make, name, spacing), name=name, later=True) is None:
            del self._once[key]

    async def _run_once(
        self,
        key: Hashable,
        make: Callable[[], Coroutine[Any, Any, object]],
        name: str,
        spacing: timedelta,
    ) -> None:
        self._once[key] = _Once.RUNNING
        started = asyncio.get_running_loop().time()
        try:
            await make()
        finally:
            again = self._once.pop(key, None) is _Once.AGAIN
            if again:
                elapsed = asyncio.get_running_loop().time() - started
                self._spawn_spaced(key, make, name, spacing, spacing.total_seconds() - elapsed)

    def _spawn_spaced(
        self,
        key: Hashable,
        make: Callable[[], Coroutine[Any, Any, object]],
        name: str,
        spacing: timedelta,
        delay: float,
    ) -> None:
        """The piece that follows one asked for again while it ran: at once, or after
        ``delay`` seconds spent waiting outside the slots (asked meanwhile, it is this piece)."""
        if delay <= 0:
            self.spawn_once(key, make, name=name, spacing=spacing)
            return
        self._once[key] = _Once.WAITING

        async def spaced() -> None:
            await asyncio.sleep(delay)
            del self._once[key]
            self.spawn_once(key, make, name=name, spacing=spacing)

        # ``urgent``: the wait itself takes no slot; the piece it hands over waits its turn
        if self.spawn(spaced(), name=name, urgent=True) is None:
            del self._once[key]

    async def wait_idle(self) -> None:
        """Wait until no work is left, including work the finished work spawned."""
        while True:
            for _ in range(_SETTLE_ROUNDS):
                await asyncio.sleep(0)
            if not self._tasks:
                return
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self, grace: timedelta) -> None:
        """Refuse new work, wait up to ``grace`` for the running work, cancel the rest."""
        self._state = _State.CLOSED
        if not self._tasks:
            return
        pending = set(self._tasks)
        _, late = await asyncio.wait(pending, timeout=max(grace.total_seconds(), 0.0))
        if late:
            log.warning("slack: cancelling %d background tasks at shutdown", len(late))
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    async def _in_turn(self, work: Coroutine[Any, Any, object], name: str, later: bool) -> None:
        # spawned by a request being acked, whose store calls go ahead: this work's wait
        # their turn (the task has a copy of the request's context)
        try:
            with calls_ahead(False):
                await self._slots.acquire(later=later)
                try:
                    if await self.gate.quiet():  # each start waits for a quiet moment
                        await self._guarded(work, name)
                        return
                    async with self._busy_lane:  # acks never stop: one piece at a time
                        await self._guarded(work, name)
                finally:
                    self._slots.release()
        finally:
            work.close()  # a no-op once awaited; frees it if cancelled before it started

    @staticmethod
    async def _guarded(work: Coroutine[Any, Any, object], name: str) -> None:
        try:
            await work
        except GraphInterrupt:  # the pause signal is never ours to swallow
            raise
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("slack: %s failed", name)
