"""The bot's background work (resumes after an ack, posts, home refreshes), kept and awaited.

Bolt runs a listener's code after ``ack()`` in a task nobody keeps; a shutdown could cut it
off after Slack got its 200. Our listeners ack, then hand the work to :class:`BackgroundTasks`,
which keeps every task, logs its failure, and on ``close`` waits for them (bounded) and cancels
what is left.

Acks come first. An ack has a deadline (Slack gives up after 3 s); the work behind it has none.
Both share one event loop, so work waits while requests are being acked (:class:`AckFirst`),
at most ``patience``; and how much work runs at once is bounded by how fast acks are (additive
increase, multiplicative decrease): each ack answered within ``ack_budget`` lets one more piece
run at once, up to ``max_running``; a slower one halves how many may (at most once per budget),
down to one. Under a steady stream of clicks the work used to wait 1 s for a quiet moment that
never came, then ran one piece at a time: a click waited 2-3 s before its run continued
(``tests/benchmarks/slack_ack.py``). Urgent work — opening a modal, whose ``trigger_id``
expires 3 s after the click — skips both.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import Coroutine, Iterator
from datetime import timedelta
from typing import Any, Final

from langgraph.errors import GraphInterrupt

from channels.slack.redaction import log

DEFAULT_PATIENCE: Final = timedelta(milliseconds=250)
DEFAULT_ACK_BUDGET: Final = timedelta(milliseconds=100)
"""An ack slower than this halves how much work runs at once (acks' target: p99 under 100 ms)."""
DEFAULT_MAX_RUNNING: Final = 16
"""A resume is mostly CPU on this loop: more at once shares it thinner (measured on a burst of
50 clicks, 64 at once finished them no sooner and their median later than 8), and 16 overlap
the waits on the database and the Slack API."""
DEFAULT_START_RUNNING: Final = 8
_SETTLE_ROUNDS: Final = 5  # loop turns to let a just-acked listener hand its work over


class AckFirst:
    """Times the requests being acked and bounds the work that runs beside them.

    ``limit`` is how many pieces of work may run at once while requests are being acked: one
    more after each ack answered within ``ack_budget``, half as many after a slower one (once
    per budget: a burst of slow acks halves it once), between 1 and ``max_running``; with no
    request being acked, ``max_running``.
    """

    def __init__(
        self,
        patience: timedelta = DEFAULT_PATIENCE,
        *,
        ack_budget: timedelta = DEFAULT_ACK_BUDGET,
        max_running: int = DEFAULT_MAX_RUNNING,
        start_running: int = DEFAULT_START_RUNNING,
    ) -> None:
        self._patience = patience.total_seconds()
        self._quiet = asyncio.Event()
        self._quiet.set()
        self._budget = ack_budget.total_seconds()
        self._max = max(1, max_running)
        self.limit = min(self._max, max(1, start_running))
        self._acking = 0
        self._last_cut = float("-inf")
        self._changed: asyncio.Event | None = None

    @property
    def running_at_once(self) -> int:
        """How many pieces of work may run at once now."""
        return self.limit if self._acking else self._max

    @contextlib.contextmanager
    def acking(self) -> Iterator[None]:
        """Around the handling of one request, up to its response."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        self._acking += 1
        self._quiet.clear()
        try:
            yield
        finally:
            self._acking -= 1
            self.acked(loop.time() - began, now=loop.time())
            if not self._acking:
                self._quiet.set()
                self._wake()

    async def quiet(self) -> bool:
        """Wait until no request is being acked (``True``), or ``patience`` has passed."""
        if self._quiet.is_set():
            return True
        try:
            await asyncio.wait_for(self._quiet.wait(), self._patience)
        except TimeoutError:
            return False
        return True

    def acked(self, seconds: float, *, now: float) -> None:
        """One ack took ``seconds``: the bound on work grows by one, or is halved."""
        if seconds <= self._budget:
            grown = min(self._max, self.limit + 1)
            if grown != self.limit:
                self.limit = grown
                self._wake()
        elif now - self._last_cut >= self._budget:
            self._last_cut = now
            self.limit = max(1, self.limit // 2)

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    def changed(self) -> asyncio.Event:
        """Set when the bound grows or a piece of work ends (cleared by the waiter)."""
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class BackgroundTasks:
    """A set of running tasks; refuses new work once closed."""

    def __init__(
        self, *, gate: AckFirst | None = None, max_running: int = DEFAULT_MAX_RUNNING
    ) -> None:
        self.gate = gate or AckFirst(max_running=max_running)
        self._running = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._state = _State.OPEN

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def closed(self) -> bool:
        return self._state is _State.CLOSED

    def spawn(
        self, work: Coroutine[Any, Any, object], *, name: str, urgent: bool = False
    ) -> asyncio.Task[None] | None:
        """Run ``work`` in a kept task; ``None`` (and the work dropped) after ``close``."""
        if self._state is _State.CLOSED:
            work.close()
            log.warning("slack: %s dropped: the bot is shutting down", name)
            return None
        runner = self._guarded(work, name) if urgent else self._in_turn(work, name)
        task = asyncio.get_running_loop().create_task(runner, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

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

    async def _in_turn(self, work: Coroutine[Any, Any, object], name: str) -> None:
        try:
            changed = self.gate.changed()
            while self._running >= self.gate.running_at_once:  # no order owed among them
                changed.clear()
                await changed.wait()
            self._running += 1
            try:
                await self.gate.quiet()  # the requests being acked first, a while at most
                await self._guarded(work, name)
            finally:
                self._running -= 1
                changed.set()
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
