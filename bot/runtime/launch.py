"""A parallel launch as ONE LangGraph node (the "parallel block" of the lab report).

LangGraph stops a graph after the superstep in which anything interrupted, so a paused branch
would stop its siblings. Here every branch is a compiled subgraph run as an asyncio task to its
end or its pause inside one node; the node applies the join policy itself:

- nothing else can move and some branches paused → re-raise every pause together (the tree rests);
- FailFast, a failure → cancel the running branches, withdraw the paused ones' pauses, join now
  with the original error (``on_join_error`` by class and cause chain, else re-raise it);
- a quorum decided → cancel / withdraw the unfinished branches, join now with the results.

Each branch's checkpoint namespace is pinned to its slot (``<task ns>|<1000 + index>``): without
it, concurrent subgraph calls take namespaces in the order their loops start, and a branch can
resume another branch's checkpoint (lab e4: 19 of 20 runs). This uses LangGraph's internal
scratchpad (``__pregel_scratchpad``), measured on langgraph 1.2.24 and checked across the
declared range (``>=1.2.12,<1.3``): tests/runtime/test_lab_regressions.py guards it, and
tests/version_matrix.sh runs it at both ends of the range.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, assert_never

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_SCRATCHPAD
from langgraph.config import get_config
from langgraph.errors import GraphInterrupt
from langgraph.graph.state import CompiledStateGraph

from bot.components.joins import (
    JoinAll,
    JoinFailFast,
    JoinFailure,
    JoinQuorum,
    JoinQuorumGroups,
    matches,
)
from bot.components.specs import AgentSpec, LaunchStep, WorkflowSpec, spec_of
from bot.core.enums import ExecutionStatus, PauseResolution
from bot.core.errors import StepFailedError
from bot.core.failures import ExecutionFailure
from bot.runtime.frame import FRAME_KEY, ClosedByDeadline, RunFrame
from bot.runtime.services import Runtime
from bot.runtime.withdrawals import withdraw
from bot.store.closings import Withdrawn
from bot.store.records import NewExecution

SLOT_BASE = 1000
_CHILD_IDS = uuid.UUID("6f1d3c1e-52c5-4d8e-9a61-0b7f2f6c9e10")

Graph = CompiledStateGraph[Any, Any, Any, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Branch:
    index: int
    label: str
    target: type
    text: str
    item_index: int | None


@dataclass(slots=True)
class _Tally:
    results: dict[int, str] = dataclasses.field(default_factory=dict)
    errors: dict[int, BaseException] = dataclasses.field(default_factory=dict)
    paused: dict[int, GraphInterrupt] = dataclasses.field(default_factory=dict)
    closed: set[int] = dataclasses.field(default_factory=set)  # stopped by this deadline
    beyond: ClosedByDeadline | None = None  # stopped by an outer launch's deadline


async def invoke_pinned(
    graph: Graph,
    graph_input: Any,
    scratchpad: Any,
    slot: int,
    configurable: Mapping[str, Any],
) -> Any:
    """Run ``graph`` as a child of the current task under the namespace ``<task ns>|<slot>``.

    The slot is fixed per branch, so a branch finds its own checkpoint on every pass whatever
    order the branches start in (LangGraph numbers concurrent subgraph calls by start order).
    """
    if slot < 1:
        raise ValueError("slot 0 would share the task's own namespace")
    pinned = dataclasses.replace(scratchpad, subgraph_counter=lambda: slot)
    config: RunnableConfig = {"configurable": {CONFIG_KEY_SCRATCHPAD: pinned, **configurable}}
    return await graph.ainvoke(graph_input, config)


class GraphLookup:
    """Graphs by component, filled after every graph is built (children are looked up lazily)."""

    def __init__(self) -> None:
        self.agents: dict[type, Graph] = {}
        self.loops: dict[type, Any] = {}  # agent class → AgentLoop
        self.children: dict[type, Graph] = {}


def plan_branches(step: LaunchStep, text: str) -> list[Branch]:
    if step.items is not None:
        target = step.targets[0]
        items = list(step.items(text))
        return [
            Branch(index=i, label=f"{_name(target)}[{i}]", target=target, text=item, item_index=i)
            for i, item in enumerate(items)
        ]
    return [
        Branch(index=i, label=_name(t), target=t, text=text, item_index=None)
        for i, t in enumerate(step.targets)
    ]


def _name(target: type) -> str:
    spec = spec_of(target)
    return spec.name if spec is not None else target.__name__


def _branch_key_prefix(frame: RunFrame, ns: str, slot: int) -> str:
    return f"{frame.root_execution_id}{ns}|{slot}|"


class Launch:
    """One run of a launch node in one pass."""

    def __init__(
        self,
        runtime: Runtime,
        graphs: GraphLookup,
        step: LaunchStep,
        frame: RunFrame,
        ns: str,
    ) -> None:
        self._runtime = runtime
        self._graphs = graphs
        self._step = step
        self._frame = frame
        self._ns = ns
        self._scratchpad = get_config()["configurable"][CONFIG_KEY_SCRATCHPAD]
        self._closes_at: datetime | None = None  # the quorum's deadline, once known
        self._expired = False  # the deadline had passed when this run began

    async def run(self, text: str) -> str:
        branches = plan_branches(self._step, text)
        if not branches:
            return "[]"
        tally = _Tally()
        waiting = list(branches)
        running: dict[asyncio.Task[str], Branch] = {}
        limit = self._step.max_concurrency or len(branches)

        def start_more() -> None:
            while waiting and len(running) < limit:
                branch = waiting.pop(0)
                running[asyncio.ensure_future(self._invoke(branch))] = branch

        deadline = await self._deadline_timer()
        start_more()
        try:
            while running:
                waiting_on: set[asyncio.Future[Any]] = {*running, *([deadline] if deadline else [])}
                done, _ = await asyncio.wait(waiting_on, return_when=asyncio.FIRST_COMPLETED)
                for task in [t for t in running if t in done]:
                    await self._classify(running.pop(task), task, tally)
                decision = self._decided(tally, len(branches), deadline_passed=self._past(deadline))
                if decision is not None:
                    cancelled = [b.label for b in running.values()] + [b.label for b in waiting]
                    await self._stop(running, waiting, tally)
                    return await self._join(tally, branches, decision, cancelled)
                start_more()  # a paused branch freed its slot
        finally:
            for task in running:
                task.cancel()
            if deadline is not None:
                deadline.cancel()
        if tally.beyond is not None:  # an outer launch's deadline stopped a branch
            raise tally.beyond
        if self._expired:
            # the deadline had passed before this pass: every branch ran to its end or to a
            # question it may no longer ask; what finished joins, the rest is withdrawn
            decision = self._decided(tally, len(branches), deadline_passed=True)
            assert decision is not None
            await self._stop(running, waiting, tally)
            return await self._join(tally, branches, decision, [])
        if tally.paused:
            interrupts = tuple(i for e in tally.paused.values() for i in e.args[0])
            raise GraphInterrupt(interrupts)
        if tally.errors:
            return await self._join(tally, branches, _first_error(tally), [])
        return self._joined_text(tally, branches)

    # ---------------------------------------------------------------- branches

    async def _invoke(self, branch: Branch) -> str:
        slot = SLOT_BASE + branch.index
        spec = spec_of(branch.target)
        frame = self._branch_frame()
        if isinstance(spec, WorkflowSpec):
            frame = await self._child_frame(branch, spec, slot)
            graph = self._graphs.children[branch.target]
            graph_input: dict[str, Any] = {"input": {"text": branch.text}}
        elif isinstance(spec, AgentSpec):
            frame = dataclasses.replace(frame, item_index=branch.item_index)
            graph = self._graphs.agents[branch.target]
            graph_input = {"messages": [HumanMessage(content=branch.text)], "iterations": 0}
        else:  # pragma: no cover - assembly refuses other targets
            raise StepFailedError(f"{branch.label} cannot be launched")
        result = await invoke_pinned(graph, graph_input, self._scratchpad, slot, {FRAME_KEY: frame})
        return _branch_text(result)

    def _branch_frame(self) -> RunFrame:
        """The frame a branch runs in: its pauses close at this launch's deadline (or an
        earlier one it runs under)."""
        frame, closes_at = self._frame, self._closes_at
        if closes_at is None or (frame.closes_at is not None and frame.closes_at <= closes_at):
            return frame
        return dataclasses.replace(frame, closes_at=closes_at)

    async def _child_frame(self, branch: Branch, spec: WorkflowSpec, slot: int) -> RunFrame:
        parent = self._branch_frame()
        child_id = uuid.uuid5(_CHILD_IDS, f"{parent.root_execution_id}{self._ns}|{slot}").hex
        await self._runtime.store.ensure_execution(
            NewExecution(
                execution_id=child_id,
                root_execution_id=parent.root_execution_id,
                parent_execution_id=parent.execution_id,
                thread_id=parent.thread_id,
                tenant_id=parent.tenant_id,
                owner_id=parent.owner_id,
                workflow=spec.name,
                input={"text": branch.text},
                created_at=self._runtime.clock.now(),
            )
        )
        return dataclasses.replace(
            parent,
            execution_id=child_id,
            workflow=spec.name,
            parent_execution_id=parent.execution_id,
            item_index=branch.item_index,
        )

    async def _classify(self, branch: Branch, task: asyncio.Task[str], tally: _Tally) -> None:
        error = task.exception()
        if error is None:
            tally.results[branch.index] = task.result()
            await self._child_status(branch, ExecutionStatus.COMPLETED, {"text": task.result()})
        elif isinstance(error, GraphInterrupt):
            tally.paused[branch.index] = error
            await self._child_status(branch, ExecutionStatus.PAUSED)
        elif isinstance(error, ClosedByDeadline):
            if error.closes_at == self._closes_at:
                tally.closed.add(branch.index)
            else:
                tally.beyond = error
        else:
            tally.errors[branch.index] = error
            failure = ExecutionFailure.of(error)
            await self._child_status(branch, ExecutionStatus.FAILED, error=failure)

    async def _child_status(
        self,
        branch: Branch,
        status: ExecutionStatus,
        output: Any | None = None,
        error: ExecutionFailure | None = None,
    ) -> None:
        if not isinstance(spec_of(branch.target), WorkflowSpec):
            return
        slot = SLOT_BASE + branch.index
        child_id = uuid.uuid5(_CHILD_IDS, f"{self._frame.root_execution_id}{self._ns}|{slot}").hex
        await self._runtime.store.set_status(
            child_id, status, self._runtime.clock.now(), output=output, error=error
        )

    # ---------------------------------------------------------------- the join

    async def _deadline_timer(self) -> asyncio.Future[None] | None:
        """A timer on the application's clock for a quorum's deadline (counted from the
        launch's first pass, pauses included); None without one, or when it has passed before
        this run (``_expired``). Sets ``_closes_at``, which the branches' pauses close at."""
        policy = self._step.join
        deadline = getattr(policy, "deadline", None)
        if deadline is None:
            return None
        clock = self._runtime.clock
        started = await self._runtime.store.launch_started_at(
            f"{self._frame.root_execution_id}{self._ns}", self._frame.root_execution_id, clock.now()
        )
        self._closes_at = started + deadline
        remaining = self._closes_at - clock.now()
        if remaining <= timedelta(0):
            self._expired = True  # no race: the branches run to their end or their deadline
            return None
        return asyncio.ensure_future(clock.sleep(remaining))

    @staticmethod
    def _past(deadline: asyncio.Future[None] | None) -> bool:
        return deadline is not None and deadline.done() and not deadline.cancelled()

    def _decided(
        self, tally: _Tally, total: int, *, deadline_passed: bool = False
    ) -> BaseException | bool | None:
        """None while undecided; an error (FailFast, unreachable quorum) or True (decided)."""
        policy = self._step.join
        if deadline_passed and isinstance(policy, JoinQuorum | JoinQuorumGroups):
            return True  # the deadline passed: join with what finished
        match policy:
            case JoinFailFast():
                return _first_error(tally) if tally.errors else None
            case JoinAll():
                return None
            case JoinQuorum(max=k):
                if len(tally.results) >= k:
                    return True
                if total - len(tally.errors) < k:
                    return StepFailedError(
                        f"the quorum of {k} can no longer be reached ({len(tally.errors)} failed)"
                    )
                return None
            case JoinQuorumGroups(groups=groups, max=k):
                for members in groups.values():
                    if sum(1 for i in members if i in tally.results) >= k:
                        return True
                reachable = any(
                    len([i for i in members if i not in tally.errors]) >= k
                    for members in groups.values()
                )
                if not reachable:
                    return StepFailedError(f"no group can reach {k} any more")
                return None
            case _:
                assert_never(policy)

    async def _stop(
        self, running: dict[asyncio.Task[str], Branch], waiting: list[Branch], tally: _Tally
    ) -> None:
        """Cancel the running branches and withdraw every pause of the unfinished ones."""
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        unfinished = [*running.values(), *waiting]
        running.clear()
        waiting.clear()
        for branch in unfinished:
            await self._child_status(branch, ExecutionStatus.CANCELLED)
        for index in [*tally.paused, *sorted(tally.closed)]:
            await self._withdraw_branch(index)
        for branch in unfinished:
            await self._withdraw_branch(branch.index)
        for index in [*tally.paused, *sorted(tally.closed)]:
            await self._child_status_by_index(index, ExecutionStatus.CANCELLED)

    async def _child_status_by_index(self, index: int, status: ExecutionStatus) -> None:
        step_targets = self._step.targets
        target = step_targets[0] if self._step.items is not None else step_targets[index]
        branch = Branch(index=index, label="", target=target, text="", item_index=None)
        await self._child_status(branch, status)

    async def _withdraw_branch(self, index: int) -> None:
        runtime = self._runtime
        prefix = _branch_key_prefix(self._frame, self._ns, SLOT_BASE + index)
        for record in await runtime.store.list_pending_under(self._frame.root_execution_id, prefix):
            closed = await runtime.store.close(
                record.pause_id, Withdrawn(), at=runtime.clock.now(), tenant_id=record.tenant_id
            )
            if closed is not None and closed.is_sent:
                await withdraw(runtime, closed, PauseResolution.WITHDRAWN)

    async def _join(
        self,
        tally: _Tally,
        branches: Sequence[Branch],
        decision: BaseException | bool,
        cancelled: list[str],
    ) -> str:
        if decision is True:
            return self._joined_text(tally, branches)
        assert isinstance(decision, BaseException)
        failure = JoinFailure(
            error=decision,
            results={branches[i].label: text for i, text in tally.results.items()},
            withdrawn=[branches[i].label for i in tally.paused],
            cancelled=cancelled,
        )
        for error_class, handler in self._step.on_join_error:
            if matches(decision, error_class):
                outcome = handler(failure)
                if inspect.isawaitable(outcome):
                    outcome = await outcome
                return str(outcome)
        raise decision

    def _joined_text(self, tally: _Tally, branches: Sequence[Branch]) -> str:
        done = {branches[i].label: text for i, text in sorted(tally.results.items())}
        if len(branches) == 1 and self._step.items is None:
            return next(iter(done.values()), "")
        return "\n\n".join(f"{label}: {text}" for label, text in done.items())


def _first_error(tally: _Tally) -> BaseException:
    return tally.errors[min(tally.errors)]


def _branch_text(result: Mapping[str, Any]) -> str:
    """A branch's answer: a child workflow's output text, or an agent's last message."""
    if "output" not in result and "messages" in result:
        if result["messages"] and isinstance(last := result["messages"][-1], AIMessage):
            content = last.content
            return content if isinstance(content, str) else json.dumps(content)
        return ""
    output = result.get("output")
    if isinstance(output, dict):
        text = output.get("text")
        return text if isinstance(text, str) and len(output) == 1 else json.dumps(output)
    return ""
