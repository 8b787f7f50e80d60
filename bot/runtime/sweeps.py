"""The App's sweeps, each on its own timer: unread replies, recovery, quorum deadlines and
expiries, reminders and escalations, untold ends, retention.

One timer each (``Sweeps.start``), so a sweep held by a slow call (a Slack that hangs, a
database that froze) never holds the others: recovery goes on while a reminder waits.

Each moves what no caller is there to move (a process died, a deadline passed), and tells the
channels through the App's resume event like any answer (``by_sweep``), so a channel brings its
messages up to date after a crash too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Final

from bot.core.answers import Answered, AnswerOutcome
from bot.core.clock import TimerHandle
from bot.core.enums import PauseAnswerer, PauseResolution
from bot.core.results import ExecutionResumeEvent, ReceivedReply
from bot.runtime.engine import Engine, PassReport
from bot.runtime.nudges import send_due_nudges
from bot.runtime.services import Runtime, log
from bot.runtime.views import Views
from bot.store.records import ExecutionRow

SWEEP_INTERVAL: Final = timedelta(seconds=3)
"""The recovery and deadline sweeps' interval: with the lease's 8 s, a tree whose instance died
is continued within about 11 s (``python -m tests.benchmarks.recovery_time``)."""
UNREAD_GRACE: Final = timedelta(seconds=60)
"""A reply kept unread this long was left by a process that died before reading it (reading
with a model takes seconds, not a minute): the sweep reads it."""
TELL_GRACE: Final = timedelta(seconds=30)
"""A run's end not told this long after it ended was left by a process that died between the
end and the telling (telling takes a few Slack calls, not half a minute): the sweep tells it."""
RETENTION_INTERVAL: Final = timedelta(seconds=30)
"""The retention sweep's interval (its own timer, like every sweep)."""

EmitResume = Callable[[ExecutionResumeEvent], Awaitable[bool]]
ReadKept = Callable[[ReceivedReply], Awaitable[AnswerOutcome]]


class Sweeps:
    """What the App's timer runs; each sweep returns how much it did."""

    def __init__(
        self,
        runtime: Runtime,
        engine: Engine,
        views: Views,
        *,
        emit_resume: EmitResume,
        read_kept: ReadKept,
        tell_delegations: Callable[[], Awaitable[int]] | None = None,
    ) -> None:
        self._runtime = runtime
        self._engine = engine
        self._views = views
        self._emit_resume = emit_resume
        self._read_kept = read_kept
        self._tell_delegations = tell_delegations
        self._retained_at: datetime | None = None  # the retention sweep's last run

    def named(self) -> tuple[tuple[str, Callable[[], Awaitable[int]]], ...]:
        """Every sweep by its name, in the order one tick runs them."""
        return (
            ("unread_replies", self.read_unread),
            ("recovery", self.recover),
            ("deadline", self.close_due),
            ("reminders", self.nudge),
            ("untold_ends", self.tell_untold),
            ("untold_delegations", self.tell_delegations),
        )

    def start(self, interval: timedelta = SWEEP_INTERVAL) -> list[TimerHandle]:
        """Each sweep on a timer of its own (retention on ``RETENTION_INTERVAL``); the handles
        to cancel on close."""
        clock = self._runtime.clock
        timers = [
            clock.call_every(interval, self._timed(name, sweep)) for name, sweep in self.named()
        ]
        timers.append(
            clock.call_every(
                max(interval, RETENTION_INTERVAL), self._timed("retention", self.retention)
            )
        )
        return timers

    def _timed(
        self, name: str, sweep: Callable[[], Awaitable[int]]
    ) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            await self._sweep(name, sweep)

        return run

    async def tick(self) -> None:
        """Every sweep once, one after the other (tests, and a caller of its own)."""
        for name, sweep in self.named():
            await self._sweep(name, sweep)
        now = self._runtime.clock.now()
        if self._retained_at is None or now - self._retained_at >= RETENTION_INTERVAL:
            self._retained_at = now
            await self._sweep("retention", self.retention)

    async def _sweep(self, name: str, sweep: Callable[[], Awaitable[int]]) -> None:
        """Run one sweep, counted (``countersign_sweeps``, ``countersign_swept``)."""
        metrics = self._runtime.metrics
        try:
            moved = await sweep()
        except Exception as error:  # a sweep that fails is retried at the next tick
            metrics.sweep_ran(name, moved=0, failed=True)
            log.warning(
                "%s sweep failed: %s: %s",
                name,
                type(error).__name__,
                error,
                extra={"outcome": "sweep-failed"},
            )
            return
        metrics.sweep_ran(name, moved=moved)

    async def read_unread(self) -> int:
        """Read the replies kept more than ``UNREAD_GRACE`` ago and never read (their process
        died), and move their trees on; how many were read."""
        read = 0
        store = self._runtime.store
        for record in await store.unread_replies(self._runtime.clock.now() - UNREAD_GRACE):
            assert record.unread_reply is not None and record.unread_by is not None
            owners = record.answered_by is PauseAnswerer.THREAD_OWNER
            outcome = await self._read_kept(
                ReceivedReply(
                    pause_id=record.pause_id,
                    tenant_id=record.tenant_id,
                    reply=record.unread_reply,
                    owner_id=record.unread_by if owners else None,
                    answered_by=None if owners else record.unread_by,
                )
            )
            if isinstance(outcome, Answered):
                read += 1
                continue
            log.warning(
                "recovery: a kept reply was not taken: %s (execution_id=%s tenant_id=%s)",
                type(outcome).__name__,
                record.execution_id,
                record.tenant_id,
            )
        return read

    async def recover(self) -> int:
        """Continue the trees whose holder died, each told as soon as its pass ends (after an
        outage a batch holds every tree answered during it: told at the batch's end, the first
        waited for all the others); how many were continued."""

        async def tell(root: ExecutionRow, report: PassReport) -> None:
            await self._tell_moved(root, PauseResolution.REPLIED, report, every_answer=True)

        return len(await self._engine.recover(tell))

    async def close_due(self) -> int:
        """Close the questions whose quorum deadline passed; how many trees were moved."""
        moved = await self._engine.close_due()
        for root, report in moved:
            await self._tell_moved(root, PauseResolution.WITHDRAWN, report)
        return len(moved)

    async def nudge(self) -> int:
        """Send the reminders and escalations due (``bot.runtime.nudges``); how many."""
        return await send_due_nudges(self._runtime, self._engine.beside)

    async def tell_untold(self) -> int:
        """Tell the channels the ends nobody told (the outbox of a run's end): each is claimed
        once (``mark_told``) and told with every answer of its tree; how many were told."""
        store = self._runtime.store
        told = 0
        for root in await store.untold_roots(self._runtime.clock.now() - TELL_GRACE):
            claimed_at = self._runtime.clock.now()
            if not await store.mark_told(root.execution_id, claimed_at):
                continue  # another instance claimed it
            log.warning(
                "recovery: telling the end of execution %s (tenant_id=%s)",
                root.execution_id,
                root.tenant_id,
            )
            if not await self._tell_moved(
                root, PauseResolution.REPLIED, PassReport(ran=True), every_answer=True
            ):  # a channel could not be told (Slack away): in the outbox again, the next tick
                await store.unmark_told(root.execution_id, claimed_at)
                continue
            told += 1
        return told

    async def tell_delegations(self) -> int:
        """Tell delegates what they are owed: a delegation started or ended by another
        process (the command line), told by the first instance whose channels listen."""
        return 0 if self._tell_delegations is None else await self._tell_delegations()

    async def retention(self) -> int:
        """Remove resolved pause records older than the application's retention window, and
        the tool runs of attached graphs' trees that ended before it."""
        retention = self._runtime.assembly.application.pause_record_retention
        cutoff = self._runtime.clock.now() - retention
        removed = await self._runtime.store.delete_resolved_before(cutoff)
        if removed:
            log.info("retention sweep removed %d resolved pause records", removed)
        return removed + await self._runtime.tool_runs.delete_of_trees_ended_before(cutoff)

    async def _tell_moved(
        self,
        root: ExecutionRow,
        resolution: PauseResolution,
        report: PassReport,
        *,
        every_answer: bool = False,
    ) -> bool:
        """A tree moved by a sweep, not by a caller: its resume event, so channels catch up;
        whether every channel was told.

        ``every_answer``: after a crash the dead holder may have taken answers it never told,
        so the event carries every answer of the tree (a channel shows each outcome once)."""
        answered = await self._views.answers_told(root.execution_id, report, every=every_answer)
        return await self._emit_resume(
            ExecutionResumeEvent(
                tenant_id=root.tenant_id,
                thread_id=root.thread_id,
                execution_id=root.execution_id,
                answered_by="",
                resolution=resolution,
                by_sweep=True,
                answered=answered,
                result=await self._views.result(root.execution_id, record=False),
                error=report.error,
            )
        )
