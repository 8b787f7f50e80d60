"""Passes over an execution tree: the first one, the continuations, and how a tree ends.

One pass at a time per tree (an in-process lock; several instances take a lease instead). A
pass continues every resolved pause of the tree with one ``Command(resume={id: ...})`` and, before
the tree rests, takes the pauses resolved meanwhile (the drain).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.messages import ToolMessage
from langgraph.errors import GraphInterrupt
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot

from bot.core.enums import ExecutionStatus, PauseResolution, PauseStatus
from bot.core.errors import CountersignError, RunInterruptedError, StepFailedError
from bot.core.failures import ExecutionFailure
from bot.core.field_errors import failure_text
from bot.core.tracing import span
from bot.runtime.frame import RunFrame
from bot.runtime.saved_results import save_result
from bot.runtime.services import Runtime, log
from bot.runtime.tree_guard import Held, TreeGuard
from bot.runtime.withdrawals import withdraw
from bot.store.interruptions import is_interruption
from bot.store.leases import LeaseClaim
from bot.store.new_threads import NewThreads
from bot.store.records import (
    ExecutionRow,
    NewExecution,
    OpenTree,
    PauseRecord,
    changed,
    interrupts_to_resume,
    waiting_on_siblings,
)
from bot.store.tables import ATTACHED_PREFIX


@dataclass(frozen=True, slots=True, kw_only=True)
class Rested:
    """A pass stopped with questions waiting: each pause's interrupt id, by its key."""

    by_key: dict[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class Ended:
    """A pass ran the graph to its end: what the execution outputs."""

    output: Any | None


class TreeKind(Protocol):
    """What runs the passes of a kind of tree: our compiled workflows, or a LangGraph graph
    attached to the App (``bot.runtime.attached_graphs``). The engine keeps the rest — the
    lease, the records, the drain — the same for both."""

    async def run(self, frame: RunFrame, graph_input: Any) -> Rested | Ended:
        """One LangGraph pass (failures raise)."""
        ...

    async def resume_input(
        self, frame: RunFrame, to_resume: Mapping[str, tuple[PauseRecord, ...]]
    ) -> tuple[RunFrame, Any]:
        """The frame and input of a pass that resumes ``to_resume`` (answered pauses by the
        interrupt they resume)."""
        ...

    async def restart_input(self, frame: RunFrame, row: ExecutionRow) -> Any:
        """The input of a pass that continues a tree cut off midway."""
        ...

    async def returned(self, frame: RunFrame) -> Mapping[str, str]:
        """What the tree's approved tools returned as LangGraph saved it, by tool call id: a
        native tool's result rides on its pass's last write, which a crash may have cut off
        (an attached graph's tools save theirs as they return: nothing)."""
        ...

    async def take_early(
        self, frame: RunFrame, answered: tuple[PauseRecord, ...]
    ) -> tuple[PauseRecord, ...]:
        """Take answers whose interrupt still waits on another question (appended to
        ``frame.took``: the call that recorded them tells their channels now, as it would a
        native step's); the pauses as they then are."""
        ...

    def first_pass(self, frame: RunFrame) -> contextlib.AbstractContextManager[None]:
        """Around the first pass of a new root: its LangGraph thread, if made for it, known
        to hold no checkpoint yet (``bot.store.new_threads``)."""
        ...


class WorkflowTrees:
    """Our compiled workflows: each step takes its own answer (``bot.runtime.seam``), so a
    resume names the pause's key and the step reads the decision from its record."""

    def __init__(
        self,
        graphs: Mapping[str, CompiledStateGraph[Any, Any, Any, Any]],
        new_threads: NewThreads | None = None,
    ) -> None:
        """``new_threads``: the checkpointer's (``OpenCheckpointer.new_threads``), if it has."""
        self._graphs = graphs
        self._new_threads = new_threads

    def first_pass(self, frame: RunFrame) -> contextlib.AbstractContextManager[None]:
        """A new root's thread is its execution id, just made (``App._new_root``): its first
        pass's read of the thread's checkpoint can only find none."""
        if self._new_threads is None:
            return contextlib.nullcontext()
        return self._new_threads.first_pass(frame.root_execution_id)

    async def run(self, frame: RunFrame, graph_input: Any) -> Rested | Ended:
        graph = self._graphs[frame.workflow]
        output = await graph.ainvoke(
            graph_input, frame.graph_config(), durability="sync", version="v2"
        )
        interrupts = list(output.interrupts)
        if interrupts:
            return Rested(
                by_key={
                    i.value["pause_key"]: i.id
                    for i in interrupts
                    if isinstance(i.value, dict) and "pause_key" in i.value
                }
            )
        value = output.value if isinstance(output.value, dict) else {}
        return Ended(output=value.get("output"))

    async def resume_input(
        self, frame: RunFrame, to_resume: Mapping[str, tuple[PauseRecord, ...]]
    ) -> tuple[RunFrame, Any]:
        answered = [r for records in to_resume.values() for r in records]
        resume = {i: {"pause_key": records[0].idempotency_key} for i, records in to_resume.items()}
        return frame.answering(answered), Command(resume=resume)

    async def take_early(
        self, frame: RunFrame, answered: tuple[PauseRecord, ...]
    ) -> tuple[PauseRecord, ...]:
        """Never needed: each of our steps asks one pause per interrupt."""
        return answered

    async def restart_input(self, frame: RunFrame, row: ExecutionRow) -> Any:
        """``None`` continues from the last checkpoint; the input if none was written."""
        graph = self._graphs[frame.workflow]
        state = await graph.aget_state(frame.graph_config())
        if not state.values and not state.next:
            return {"input": row.input}
        return None

    async def returned(self, frame: RunFrame) -> Mapping[str, str]:
        graph = self._graphs[frame.workflow]
        state = await graph.aget_state(frame.graph_config(), subgraphs=True)
        return dict(tool_results_in(state))


def tool_results_in(state: StateSnapshot) -> Iterator[tuple[str, str]]:
    """Each tool call id and what its tool returned, in ``state`` (its channels, the writes of
    its tasks, and its subgraphs' states): a tool's own messages, not errors (a rejection, a
    call that may have run)."""
    found: list[Any] = [state.values]
    found += [task.result for task in state.tasks]
    for value in found:
        channels = value.values() if isinstance(value, dict) else ()
        for channel in channels:
            for message in channel if isinstance(channel, list) else (channel,):
                if isinstance(message, ToolMessage) and message.status != "error":
                    yield message.tool_call_id, str(message.content)  # as the tool's step held it
    for task in state.tasks:
        if isinstance(task.state, StateSnapshot):
            yield from tool_results_in(task.state)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Outcome:
    """What one pass did: the failure that ended the tree, or whether the tree ended."""

    error: BaseException | None
    ended: bool
    output: Any | None = None
    pauses: tuple[PauseRecord, ...] = ()  # RESOLVED and PENDING, as the pass left them
    waiting: tuple[PauseRecord, ...] | None = None  # the pending pauses, when known

    @property
    def rests(self) -> bool:
        return not self.ended

    @property
    def status(self) -> ExecutionStatus:
        if not self.ended:
            return ExecutionStatus.PAUSED
        return ExecutionStatus.FAILED if self.error is not None else ExecutionStatus.COMPLETED


@dataclass(frozen=True, slots=True, kw_only=True)
class PassReport:
    """What the passes of one call did: whether any ran, the error that failed the tree, and
    where the tree stands (``status``, ``output``, the pending pauses) when the passes know it,
    so the caller need not read it back. ``taken``: the answers these passes gave the tree, as
    they were recorded — the call that took an answer is the one that tells its channel."""

    ran: bool
    error: BaseException | None = None
    status: ExecutionStatus | None = None
    output: Any | None = None
    waiting: tuple[PauseRecord, ...] | None = None
    taken: tuple[PauseRecord, ...] = ()
    cut_off: bool = False
    """The tree was found RUNNING: a pass before these was cut off midway (the database went
    away, the process died), and may have taken answers it never told: the caller tells every
    answer of the tree (``Views.answers_told``), as the recovery sweep does."""


def _report(outcome: _Outcome, frame: RunFrame, *, cut_off: bool = False) -> PassReport:
    return PassReport(
        ran=True,
        error=outcome.error,
        status=outcome.status,
        output=outcome.output,
        waiting=() if outcome.ended else outcome.waiting,
        taken=tuple(frame.took),
        cut_off=cut_off,
    )


class Engine:
    def __init__(self, runtime: Runtime, workflows: TreeKind, guard: TreeGuard) -> None:
        self._runtime = runtime
        self._workflows = workflows
        self._kinds: dict[str, TreeKind] = {}
        self._guard = guard
        self.ends_are_told: Callable[[], bool] = lambda: True
        """Whether a tree's end is to be told (someone listens to resume events): if not, the
        end is recorded as told in the same transaction, and stays out of the outbox."""

    @property
    def guard(self) -> TreeGuard:
        """What holds each tree: an answer's write opens a tree through it (``lock_now``,
        ``keep``) for the continuation that adopts it here."""
        return self._guard

    def beside(self, root_execution_id: str) -> AbstractAsyncContextManager[bool]:
        """Hold a tree for work beside its passes if it is free now, without waiting
        (``TreeGuard.try_hold``): yields whether it is held."""
        return self._guard.try_hold(root_execution_id)

    def attach(self, workflow: str, kind: TreeKind) -> None:
        """Run the trees whose root execution names ``workflow`` with ``kind``."""
        self._kinds[workflow] = kind

    def runs(self, workflow: str) -> bool:
        """Whether this engine can run a tree of ``workflow`` (an attached graph's trees wait
        for the graph to be attached again after a restart)."""
        return workflow in self._kinds or not workflow.startswith(ATTACHED_PREFIX)

    def _kind(self, workflow: str) -> TreeKind:
        return self._kinds.get(workflow, self._workflows)

    async def first_pass(
        self, frame: RunFrame, new: NewExecution, graph_input: dict[str, Any]
    ) -> PassReport:
        """Record the new root execution and run it until it ends or rests."""

        async def start(claim: LeaseClaim) -> bool | None:
            return await self._runtime.store.start_tree(new, claim) or None

        async with self._guard.hold(frame.root_execution_id, start) as held:
            with self._kind(frame.workflow).first_pass(frame):
                outcome = await self._run(frame, graph_input, held)
            if outcome.rests:
                outcome = await self._drain(frame, outcome, held)
            return _report(outcome, frame)

    async def recover(
        self, each: Callable[[ExecutionRow, PassReport], Awaitable[None]] | None = None
    ) -> list[tuple[ExecutionRow, PassReport]]:
        """Continue the trees whose holder died; returns the roots continued, with their passes.

        A tree needs it when it has resolved pauses nobody took, or when a pass started and
        never finished (RUNNING, untouched for longer than a lease). Trees with a live lease or
        a pass running in this process are left alone. ``each`` is called as each tree's pass
        ends (its channels told then, not once the whole batch is continued).
        """
        runtime = self._runtime
        await self._guard.give_up_lapsed()
        now = runtime.clock.now()
        live = await self._guard.live_roots(now)
        recovered: list[tuple[ExecutionRow, PassReport]] = []
        for root in await runtime.store.roots_needing_recovery(now - self._guard.ttl):
            if root.execution_id in live or self._guard.is_busy_here(root.execution_id):
                continue
            if not self.runs(root.workflow):
                continue  # an attached graph not attached (yet) in this process
            log.warning(
                "recovery: continuing execution %s (tenant_id=%s)",
                root.execution_id,
                root.tenant_id,
                extra={"execution_id": root.execution_id, "tenant_id": root.tenant_id},
            )
            try:
                report = await self._recover_tree(root)
            except Exception as error:
                if not is_interruption(error):
                    raise
                continue  # the database went away again: the next sweep tries it
            if report.ran:
                recovered.append((root, report))
                if each is not None:
                    await each(root, report)
        return recovered

    async def close_due(self) -> list[tuple[ExecutionRow, PassReport]]:
        """Move the trees that wait on a pause past its quorum's deadline: the launch decides
        and withdraws what no longer counts, so the question goes away when the deadline
        passes, not when the tree next moves. Returns the roots moved, with their passes (the
        error that failed one: an expired question whose step fails)."""
        await self._guard.give_up_lapsed()
        now = self._runtime.clock.now()
        live = await self._guard.live_roots(now)
        moved: list[tuple[ExecutionRow, PassReport]] = []
        for root in await self._runtime.store.roots_with_due_pauses(now):
            if root in live or self._guard.is_busy_here(root):
                continue
            row = await self._move(root)
            if row is not None:
                moved.append(row)
        return moved

    async def _move(self, root_execution_id: str) -> tuple[ExecutionRow, PassReport] | None:
        """A pass over a resting tree with no answer to give: its waiting steps run again and
        find the deadline passed (marked RUNNING first, so recovery finishes it after a crash)."""
        async with self._guard.hold(root_execution_id, self._open_moving) as held:
            current = _open_tree(held)
            if current is None:
                return None
            frame = _frame(current)
            outcome = await self._run(frame, None, held)
            if outcome.rests:
                outcome = await self._drain(frame, outcome, held)
            return current, PassReport(ran=True, error=outcome.error, taken=tuple(frame.took))

    async def _open_moving(self, claim: LeaseClaim) -> OpenTree | None:
        return await self._runtime.store.open_tree(claim, moving=True)

    async def _recover_tree(self, root: ExecutionRow) -> PassReport:
        async with self._guard.hold(root.execution_id, self._open) as held:
            current = _open_tree(held)
            if current is None:
                return PassReport(ran=False)
            frame = _frame(current)
            outcome = _Outcome(error=None, ended=False, pauses=held.opened.pauses)
            if current.status is ExecutionStatus.RUNNING:
                kind = self._kind(frame.workflow)
                restart = await kind.restart_input(frame, current)
                await self._hold_returned(frame, kind)
                outcome = await self._run(frame, restart, held)
            if outcome.rests:
                outcome = await self._drain(frame, outcome, held)
            return PassReport(ran=True, error=outcome.error, taken=tuple(frame.took))

    async def _hold_returned(self, frame: RunFrame, kind: TreeKind) -> None:
        """A pass cut off after its tools returned left their results in LangGraph's writes
        only: held again, so this pass's last write carries them (what the question shows of
        the run). A tool call id two of the tree's calls share is left alone."""
        taken = await self._runtime.store.list_by_root(frame.root_execution_id, [PauseStatus.TAKEN])
        unsaved = [r for r in taken if r.tool_result is None]
        if not unsaved:
            return
        returned = await kind.returned(frame)
        calls = Counter(r.ask.call_id for r in taken)
        for record in unsaved:
            call_id = record.ask.call_id
            if calls[call_id] == 1 and call_id in returned:
                frame.held_results[record.pause_id] = returned[call_id]

    async def _open(self, claim: LeaseClaim) -> OpenTree | None:
        return await self._runtime.store.open_tree(claim)

    async def continue_tree(self, root_execution_id: str) -> PassReport:
        """Continue every resolved pause of the tree; waits for a pass already running.

        A caller whose answer was taken meanwhile by the holder's drain finds nothing to do and
        returns at once (``ran=False``): the tree's current result is its answer. A tree an
        answer's write opened (``TreeGuard.keep``) is adopted as it was opened: no write.
        """
        async with self._guard.hold(root_execution_id, self._open, adopt=True) as held:
            current = _open_tree(held)
            if current is None or not self.runs(current.workflow):
                return PassReport(ran=False)
            cut_off = current.status is ExecutionStatus.RUNNING  # as found: no pass holds it
            resting = _Outcome(error=None, ended=False, pauses=held.opened.pauses)
            frame = _frame(current)
            outcome = await self._drain(frame, resting, held)
            if not frame.took:  # the holder's drain took this answer meanwhile
                return PassReport(ran=False, cut_off=cut_off)
            return _report(outcome, frame, cut_off=cut_off)

    async def _drain(self, frame: RunFrame, last: _Outcome, held: Held[Any]) -> _Outcome:
        """Pass after pass, continue every resolved pause; ``last`` if there was none to take.

        Each pass's last write returns the tree's resolved and pending pauses: when nothing is
        resolved, the pending ones are where the tree rests (and that write gave up the lease).
        """
        while True:
            to_resume = interrupts_to_resume(last.pauses)
            if not to_resume:
                last = await self._take_early(frame, last)
                if any(r.status is PauseStatus.RESOLVED for r in last.pauses):
                    return dataclasses.replace(last, waiting=None)  # taken by its own step soon
                return dataclasses.replace(
                    last, waiting=tuple(r for r in last.pauses if r.status is PauseStatus.PENDING)
                )
            resuming, graph_input = await self._kind(frame.workflow).resume_input(frame, to_resume)
            last = await self._run(resuming, graph_input, held)
            if not last.rests:
                return last

    async def _take_early(self, frame: RunFrame, last: _Outcome) -> _Outcome:
        """Take the answers that wait for their interrupt's other questions (an attached
        graph's batch answered in part), so the move that recorded one tells it at once."""
        early = waiting_on_siblings(last.pauses)
        if not early:
            return last
        kind = self._kind(frame.workflow)
        taken = {r.idempotency_key: r for r in await kind.take_early(frame, early)}
        pauses = tuple(taken.get(r.idempotency_key, r) for r in last.pauses)
        return dataclasses.replace(last, pauses=pauses)

    async def _run(self, frame: RunFrame, graph_input: Any, held: Held[Any]) -> _Outcome:
        """One LangGraph pass; records where the tree now stands."""
        runtime = self._runtime
        started = runtime.clock.now()
        with span("pass", workflow=frame.workflow, execution_id=frame.execution_id):
            outcome = await self._pass(frame, graph_input, held)
        status = "rested" if outcome.rests else outcome.status.value.lower()
        runtime.metrics.pass_ran(status, runtime.clock.now() - started)
        return outcome

    async def _pass(self, frame: RunFrame, graph_input: Any, held: Held[Any]) -> _Outcome:
        """One pass and its last write, which carries the results its tools returned; any
        other way out saves them by themselves first (``_save_held``)."""
        try:
            return await self._pass_written(frame, graph_input, held)
        except GeneratorExit:  # the coroutine closed unfinished: nothing may be awaited
            raise
        except BaseException:  # cancelled too: the save goes on, shielded
            if frame.held_results:
                await asyncio.shield(self._save_held(frame))
            raise

    async def _pass_written(self, frame: RunFrame, graph_input: Any, held: Held[Any]) -> _Outcome:
        runtime = self._runtime
        try:
            ran = await self._kind(frame.workflow).run(frame, graph_input)
        except GraphInterrupt:  # pragma: no cover - ainvoke reports interrupts in its output
            raise
        except RunInterruptedError:
            raise
        except CountersignError as error:
            await self._end(frame, held, ExecutionStatus.FAILED, error=error)
            return _Outcome(error=error, ended=True)
        except Exception as error:
            if is_interruption(error):
                raise _interrupted(frame, error) from error
            failure = StepFailedError(
                f"the execution failed: {failure_text(error)}",
                execution_id=frame.execution_id,
            )
            failure.__cause__ = error
            await self._end(frame, held, ExecutionStatus.FAILED, error=failure)
            return _Outcome(error=failure, ended=True)
        if isinstance(ran, Rested):
            results = dict(frame.held_results)
            resting = await runtime.store.rest(
                frame.root_execution_id,
                ran.by_key,
                runtime.clock.now(),
                release=held.claim,
                results=results,
            )
            _saved(frame, results)
            held.released = resting.released
            return _Outcome(error=None, ended=False, pauses=resting.pauses)
        await self._end(frame, held, ExecutionStatus.COMPLETED, output=ran.output)
        return _Outcome(error=None, ended=True, output=ran.output)

    async def _save_held(self, frame: RunFrame) -> None:
        """Save the results a pass held that no last write carried (it failed, was cut off, or
        the write itself met the database away): each tried again through a restart, as
        ``save_result`` does, so a tool that ran is never told "may have run" for want of it."""
        store, clock = self._runtime.store, self._runtime.clock
        for pause_id, result in list(frame.held_results.items()):
            try:
                await save_result(
                    clock,
                    functools.partial(store.save_tool_result, pause_id, result),
                    tool=f"the tool asked by {pause_id}",
                )
            except Exception as error:  # the pass's own failure is what its caller hears
                log.warning(
                    "tool.result-lost: the result of the tool asked by %s could not be saved (%s)",
                    pause_id,
                    failure_text(error),
                )
                return
            _saved(frame, {pause_id: result})

    async def _end(
        self,
        frame: RunFrame,
        held: Held[Any],
        status: ExecutionStatus,
        *,
        output: Any | None = None,
        error: BaseException | None = None,
        cancelled_by: str | None = None,
    ) -> None:
        """The tree ended: what still waits is closed (resolution CANCELLED), the end recorded
        and the lease given up, in one transaction; then the channels are told (who stopped
        it, ``cancelled_by``, with them)."""
        runtime = self._runtime
        results = dict(frame.held_results)
        closed = await runtime.store.end_tree(
            frame.root_execution_id,
            status,
            runtime.clock.now(),
            output=output,
            error=None if error is None else ExecutionFailure.of(error),
            release=held.claim,
            told=not self.ends_are_told(),
            results=results,
        )
        _saved(frame, results)
        held.released = True
        for record in closed:
            if record.is_sent:
                await withdraw(
                    runtime, record, PauseResolution.CANCELLED, cancelled_by=cancelled_by
                )

    async def cancel_tree(self, root: ExecutionRow, *, by: str | None = None) -> bool:
        async with self._guard.hold(root.execution_id, self._open, adopt=True) as held:
            current = _open_tree(held)
            if current is None:
                return False
            await self._end(_frame(current), held, ExecutionStatus.CANCELLED, cancelled_by=by)
            log.info(
                "execution cancelled (execution_id=%s tenant_id=%s)",
                root.execution_id,
                root.tenant_id,
            )
            return True


def _saved(frame: RunFrame, results: Mapping[str, str]) -> None:
    """Forget the held results a write saved (a result held since is kept); the answers this
    call took show theirs as saved, so their channels are told what each tool returned."""
    for pause_id, result in results.items():
        if frame.held_results.get(pause_id) == result:
            del frame.held_results[pause_id]
    for i, record in enumerate(frame.took):
        if record.pause_id in results:
            frame.took[i] = changed(record, tool_result=results[record.pause_id])


def _interrupted(frame: RunFrame, error: Exception) -> RunInterruptedError:
    """The pass met the database (or network) gone: the tree is left as it stands (running, or
    paused with its answers recorded) for the recovery sweep, never ended FAILED."""
    log.warning(
        "pass interrupted, left to recovery: %s (execution_id=%s tenant_id=%s)",
        failure_text(error),
        frame.execution_id,
        frame.tenant_id,
        extra={"outcome": "interrupted", "execution_id": frame.execution_id},
    )
    return RunInterruptedError(
        f"the execution was interrupted ({failure_text(error)}); it is continued once the "
        "database is back",
        execution_id=frame.execution_id,
    )


def _open_tree(held: Held[OpenTree]) -> ExecutionRow | None:
    """The tree as its holder opened it; None when it is unknown or has ended (the opening
    gave the lease back in the same transaction: nothing is left to do, nor to release)."""
    if held.opened.released:
        held.released = True
        return None
    return held.opened.execution


def _frame(row: ExecutionRow) -> RunFrame:
    return RunFrame(
        tenant_id=row.tenant_id,
        owner_id=row.owner_id,
        execution_id=row.execution_id,
        root_execution_id=row.root_execution_id,
        thread_id=row.thread_id,
        workflow=row.workflow,
    )
