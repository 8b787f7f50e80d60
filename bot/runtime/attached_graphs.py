"""A LangGraph graph of the user's own, attached to an App: its interrupts become pauses.

The graph keeps its own checkpointer; our records sit in our store. A pass runs the graph;
each interrupt it stops on is read as approval questions — LangChain's
``HumanInTheLoopMiddleware`` (a batched request: one pause per action; a per-call request:
one pause) or ``bot.langgraph.request_approval`` — and each question is recorded and sent
once, keyed by (graph, thread, interrupt id, action index), so passing the same interrupt
again never posts twice. An interrupt is resumed once every question it asked is answered,
with the answers in the asker's format (``{"decisions": [...]}`` in action order for a batch):
the engine's drain does it, under the tree's lease, exactly as for our own workflows.

Unlike our own steps (which take their answer inside the graph), the graph here cannot read
our records: a pass takes the answers (RESOLVED → TAKEN) before it resumes with them.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, Interrupt
from pydantic import BaseModel, ConfigDict
from pydantic_core import to_jsonable_python

from bot.components.decorators import DEFAULT_TOOL_TIMEOUT
from bot.components.specs import ChannelRoleSpec, ChannelSpec, ToolSpec, spec_of
from bot.core.dtos import ToolCallApprovalAsk, ToolCallApprovalDecision
from bot.core.enums import PauseResolution, PauseStatus
from bot.core.errors import AssemblyError, AssemblyViolation, StepFailedError
from bot.runtime.assembly import ToolBinding
from bot.runtime.attached_tools import GUARD, ToolRunGuard, UnguardableToolNode, guard_tool_node
from bot.runtime.engine import Ended, Rested
from bot.runtime.expiry import expire, is_due, nobody_in_time
from bot.runtime.frame import RunFrame
from bot.runtime.seam import PausePlace, Taken, ask_once, new_pause, ran_with
from bot.runtime.services import Runtime
from bot.store.records import ExecutionRow, PauseRecord
from bot.store.tables import ATTACHED_PREFIX

APPROVAL_MARK = "countersign.request_approval"
"""The key that marks an interrupt value made by ``request_approval``."""

DECISION_KINDS = ("approve", "edit", "reject")
"""What ``request_approval`` takes unless told otherwise."""
KNOWN_KINDS = (*DECISION_KINDS, "respond")
"""Every kind of answer a question can take (LangChain's ``DecisionType``)."""

Shape = Literal["batched", "per_call", "approval"]


class AnyArguments(BaseModel):
    """The arguments of a tool whose schema is unknown: any object."""

    model_config = ConfigDict(extra="allow")


class _NotRunHere:
    """The tool of an attached graph runs in the graph, never through Countersign."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """One question an interrupt asks."""

    tool: str
    args: dict[str, Any]
    call_id: str
    description: str | None
    allowed: tuple[str, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """How an interrupt asks (its ``shape``) and what."""

    shape: Shape
    actions: tuple[Action, ...]


def read_interrupt(interrupt: Interrupt) -> Request | None:
    """The questions of an interrupt, or None for a value Countersign cannot read."""
    value = interrupt.value
    if not isinstance(value, Mapping):
        return None
    if value.get(APPROVAL_MARK) is True:
        return Request(shape="approval", actions=(_approval_action(value),))
    if value.get("type") == "tool_approval":
        return Request(shape="per_call", actions=(_per_call_action(value, interrupt),))
    requests = value.get("action_requests")
    if isinstance(requests, list):
        configs = value.get("review_configs") or []
        return Request(
            shape="batched",
            actions=tuple(
                _batched_action(request, configs[i] if i < len(configs) else {}, i)
                for i, request in enumerate(requests)
            ),
        )
    return None


def _allowed(kinds: object) -> tuple[str, ...] | None:
    if not isinstance(kinds, list | tuple):
        return None
    return tuple(k for k in KNOWN_KINDS if k in kinds)


def _approval_action(value: Mapping[str, Any]) -> Action:
    return Action(
        tool=str(value["tool"]),
        args=dict(value.get("args") or {}),
        call_id=str(value.get("call_id") or ""),
        description=value.get("description"),
        allowed=_allowed(value.get("allowed_decisions")),
    )


def _per_call_action(value: Mapping[str, Any], interrupt: Interrupt) -> Action:
    return Action(
        tool=str(value["name"]),
        args=dict(value.get("args") or {}),
        call_id=str(value.get("tool_call_id") or ""),
        description=value.get("description") or None,
        allowed=_allowed(sorted(_decision_types(interrupt.response_schema))),
    )


def _batched_action(request: Mapping[str, Any], config: Mapping[str, Any], index: int) -> Action:
    return Action(
        tool=str(request["name"]),
        args=dict(request.get("args") or {}),
        call_id=f"action-{index}",
        description=request.get("description") or None,
        allowed=_allowed(config.get("allowed_decisions")),
    )


def _decision_types(schema: object, defs: Mapping[str, Any] | None = None) -> set[str]:
    """The ``type`` values a per-call request's JSON schema allows (its decision kinds)."""
    if not isinstance(schema, Mapping):
        return set()
    defs = {**(defs or {}), **schema.get("$defs", {})}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _decision_types(defs.get(ref.rsplit("/", 1)[-1]), defs)
    found: set[str] = set()
    for key in ("oneOf", "anyOf", "allOf"):
        for member in schema.get(key, ()):
            found |= _decision_types(member, defs)
    kind = schema.get("properties", {}).get("type", {})
    if isinstance(kind, Mapping):
        if isinstance(kind.get("const"), str):
            found.add(kind["const"])
        found |= {k for k in kind.get("enum", ()) if isinstance(k, str)}
    return found


def answer_value(
    shape: Shape,
    decisions: Sequence[ToolCallApprovalDecision],
    records: Sequence[PauseRecord],
) -> Any:
    """The resume value of an interrupt from the decisions of its questions (in action
    order), in the asker's format."""
    if shape == "approval":
        return decisions[0].model_dump(mode="json")
    formatted = [_hitl_decision(d, r) for d, r in zip(decisions, records, strict=True)]
    return formatted[0] if shape == "per_call" else {"decisions": formatted}


def _decision_of(record: PauseRecord) -> ToolCallApprovalDecision | None:
    """The decision a taken pause gives its asker; None for one that was not taken."""
    if record.status is not PauseStatus.TAKEN:
        return None
    if record.answer is None or record.answer.decision is None:
        raise RuntimeError("a taken pause has no decision")
    return ToolCallApprovalDecision.model_validate(record.answer.decision)


def _hitl_decision(decision: ToolCallApprovalDecision, record: PauseRecord) -> dict[str, Any]:
    """A decision as LangChain's middleware takes it."""
    if decision.response is not None:
        return {"type": "respond", "message": decision.response}
    if not decision.approved:
        reject: dict[str, Any] = {"type": "reject"}
        if decision.reason:
            reject["message"] = decision.reason
        return reject
    if decision.override_arguments is None:
        return {"type": "approve"}
    args = {**record.ask.arguments, **decision.override_arguments}
    return {"type": "edit", "edited_action": {"name": record.ask.tool, "args": args}}


def tool_binding(
    name: str,
    description: str,
    schema: type[BaseModel],
    role: type,
    role_spec: ChannelRoleSpec,
    channel: ChannelSpec,
) -> ToolBinding:
    """What answering needs of an attached graph's tool: its arguments' schema (an edit is
    validated against it), its role and the role's channel."""
    spec = ToolSpec(
        name=name,
        description=description,
        cls=_NotRunHere,
        input=schema,
        output=None,
        channel=role,
        timeout=DEFAULT_TOOL_TIMEOUT,
    )
    return ToolBinding(spec=spec, role=role_spec, channel=channel)


def schema_of(tool: BaseTool) -> type[BaseModel]:
    """The arguments the model gives ``tool`` (LangChain's ``tool_call_schema``)."""
    schema = tool.tool_call_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema
    return AnyArguments


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachedGraph:
    """A compiled graph attached under ``name``; its questions go to ``role``."""

    name: str
    graph: Any  # a compiled LangGraph graph (Pregel): ainvoke, aget_state
    role: type
    role_spec: ChannelRoleSpec
    channel: ChannelSpec

    @property
    def workflow(self) -> str:
        """The workflow name its executions are recorded under."""
        return f"{ATTACHED_PREFIX}{self.name}"


class AttachedTrees:
    """The passes of an attached graph's trees (a ``TreeKind`` for the engine)."""

    def __init__(self, runtime: Runtime, attached: AttachedGraph) -> None:
        self._runtime = runtime
        self._attached = attached

    @property
    def workflow(self) -> str:
        return self._attached.workflow

    def config(self, frame: RunFrame) -> dict[str, Any]:
        """The graph's own thread is the caller's ``thread_id``; its tools run guarded for
        the tree (``bot.runtime.attached_tools``)."""
        guard = ToolRunGuard(
            tool_runs=self._runtime.tool_runs,
            clock=self._runtime.clock,
            tenant_id=frame.tenant_id,
            root_execution_id=frame.root_execution_id,
            thread_id=frame.thread_id,
        )
        return {
            "configurable": {"thread_id": frame.thread_id, GUARD: guard},
            "recursion_limit": 1000,
        }

    async def run(self, frame: RunFrame, graph_input: Any) -> Rested | Ended:
        """Run the graph to its end or its questions; an interrupt whose every question a
        channel decided at once, or expired, is resumed in the same pass (so a tree the
        deadline sweep moves closes its expired questions, and is not moved again)."""
        graph = self._attached.graph
        while True:
            output = await graph.ainvoke(
                graph_input, self.config(frame), durability="sync", version="v2"
            )
            if not output.interrupts:
                return Ended(output=to_jsonable_python(output.value, fallback=repr))
            by_key: dict[str, str] = {}
            decided: dict[str, Any] = {}
            for interrupt in output.interrupts:
                request = read_interrupt(interrupt)
                if request is None:
                    raise StepFailedError(
                        f"the graph {self._attached.name} stopped on an interrupt Countersign "
                        f"cannot ask ({type(interrupt.value).__name__}): use LangChain's "
                        "HumanInTheLoopMiddleware or bot.langgraph.request_approval",
                        execution_id=frame.execution_id,
                    )
                records = await self._ask(frame, interrupt.id, request)
                by_key.update({r.idempotency_key: interrupt.id for r in records})
                answer = self._answer(frame, request.shape, await self._expire_due(records))
                if answer is not None:
                    decided[interrupt.id] = answer
            if not decided:
                return Rested(by_key=by_key)
            graph_input = Command(resume=decided)

    async def _ask(
        self, frame: RunFrame, interrupt_id: str, request: Request
    ) -> tuple[PauseRecord, ...]:
        """Record and send the questions of one interrupt, once each."""
        now = self._runtime.clock.now()
        records = []
        for index, action in enumerate(request.actions):
            place = PausePlace(
                agent=self._attached.name,
                checkpoint_ns=f"{request.shape}:{interrupt_id}",
                index=index,
                asked_at=now,
                position=index,
            )
            records.append(await self._ask_one(frame, place, action))
        return tuple(records)

    async def _ask_one(self, frame: RunFrame, place: PausePlace, action: Action) -> PauseRecord:
        binding = self.binding(action.tool)
        key = pause_key(frame, self._attached.name, place)
        ask = ToolCallApprovalAsk(
            tool=action.tool,
            arguments=action.args,
            call_id=action.call_id,
            description=action.description,
            allowed_decisions=action.allowed,
        )
        record = await self._runtime.store.get_or_create(
            new_pause(
                binding,
                frame,
                key,
                place,
                ask,
                asked_at=place.asked_at or self._runtime.clock.now(),
                channel=self._attached.channel.name,
            )
        )
        sent = await ask_once(self._runtime, binding, frame, record, place)
        return sent.record if isinstance(sent, Taken) else sent

    async def _expire_due(self, records: tuple[PauseRecord, ...]) -> tuple[PauseRecord, ...]:
        """Close the questions whose expiry has come (EXPIRED, their channels told once); the
        records as they then are."""
        now_as: list[PauseRecord] = []
        for record in records:
            due = record.status is PauseStatus.PENDING and is_due(
                self._runtime, self.binding(record.ask.tool), record
            )
            if due:  # None: answered or closed meanwhile, read it as it is
                closed = await expire(self._runtime, record)
                found = closed or await self._runtime.store.find_by_key(record.idempotency_key)
                record = found or record
            now_as.append(record)
        return tuple(now_as)

    def _answer(self, frame: RunFrame, shape: Shape, records: Sequence[PauseRecord]) -> Any | None:
        """The resume value of an interrupt once every question it asked is settled — taken,
        or expired (its asker reads that nobody approved in time, or the pass fails with
        ``PauseExpiredError``); None while one waits."""
        decisions = []
        for record in records:
            decision = _decision_of(record)
            if decision is None and record.resolution is PauseResolution.EXPIRED:
                said = nobody_in_time(
                    self.binding(record.ask.tool),
                    record.ask.tool,
                    record.closes_at,
                    execution_id=frame.execution_id,
                )
                decision = ToolCallApprovalDecision(approved=False, reason=said)
            if decision is None:
                return None
            decisions.append(decision)
        return answer_value(shape, decisions, records)

    def binding(self, tool: str) -> ToolBinding:
        """The tool's binding (registered on attach), or one taking any arguments."""
        known = self._runtime.assembly.tool_named(tool)
        if known is not None:
            return known
        attached = self._attached
        binding = tool_binding(
            tool, "", AnyArguments, attached.role, attached.role_spec, attached.channel
        )
        self._runtime.assembly.attached_tools.setdefault(tool, binding)
        return binding

    async def resume_input(
        self, frame: RunFrame, to_resume: Mapping[str, tuple[PauseRecord, ...]]
    ) -> tuple[RunFrame, Any]:
        """Take every answer (RESOLVED → TAKEN, persisted before the graph reads it), then
        resume each interrupt with its answers in the asker's format."""
        resume: dict[str, Any] = {}
        for interrupt_id, records in to_resume.items():
            taken = {r.idempotency_key: await self._take(frame, r) for r in records}
            asked = await self._asked_with(records[0], taken)  # its expired ones too
            answer = self._answer(frame, _shape_of(records[0]), asked)
            if answer is not None:
                resume[interrupt_id] = answer
        return frame, Command(resume=resume)

    async def _asked_with(
        self, one: PauseRecord, taken: Mapping[str, PauseRecord]
    ) -> list[PauseRecord]:
        """Every question of ``one``'s interrupt, in action order (by their keys: the action
        index is the key's last part), the ones in ``taken`` as they were taken."""
        asked: list[PauseRecord] = []
        stem = one.idempotency_key.rsplit("#", 1)[0]
        while True:
            key = f"{stem}#{len(asked)}"
            record = taken.get(key) or await self._runtime.store.find_by_key(key)
            if record is None:
                return asked
            asked.append(record)

    async def _take(self, frame: RunFrame, record: PauseRecord) -> PauseRecord:
        store = self._runtime.store
        binding = self.binding(record.ask.tool)
        if await store.take(record, ran_with=await ran_with(self._runtime, binding, record)):
            taken = dataclasses.replace(record, status=PauseStatus.TAKEN)
            frame.took.append(taken)
            return taken
        current = await store.find_by_key(record.idempotency_key)
        return current or record

    async def restart_input(self, frame: RunFrame, row: ExecutionRow) -> Any:
        """``None`` continues from the graph's last checkpoint; the input if none was written."""
        state = await self._attached.graph.aget_state(self.config(frame))
        if not state.values and not state.next:
            return row.input.get("input")
        return None


def _shape_of(record: PauseRecord) -> Shape:
    shape = record.node_id.split(":", 1)[0]
    if shape == "approval":
        return "approval"
    return "per_call" if shape == "per_call" else "batched"


def pause_key(frame: RunFrame, graph: str, place: PausePlace) -> str:
    """(graph, thread, interrupt id, action index) within the tree."""
    return f"{frame.root_execution_id}|{ATTACHED_PREFIX}{graph}|{frame.thread_id}|" + (
        f"{place.checkpoint_ns}#{place.index}"
    )


def attach_graph(
    runtime: Runtime, name: str, graph: Any, role: type, tools: Sequence[BaseTool] = ()
) -> AttachedTrees:
    """Check what is attached and register its tools (their schemas validate edits)."""
    problems: list[AssemblyViolation] = []
    role_spec = spec_of(role)
    channel = None
    if not isinstance(role_spec, ChannelRoleSpec) or role not in runtime.assembly.roles:
        problems.append(
            AssemblyViolation(
                rule="langgraph.role",
                component=name,
                message=f"role={getattr(role, '__name__', role)!s} must be a @channel_role "
                "implemented by a channel of the application (channels=[...])",
            )
        )
    else:
        channel = _channel_of(runtime, role)
    if not name or not callable(getattr(graph, "ainvoke", None)):
        problems.append(
            AssemblyViolation(
                rule="langgraph.graph",
                component=name or "(no name)",
                message="give a name and a compiled graph (create_agent(...), or a "
                "StateGraph compiled with a checkpointer)",
            )
        )
    elif getattr(graph, "checkpointer", None) is None:
        problems.append(
            AssemblyViolation(
                rule="langgraph.checkpointer",
                component=name,
                message="the graph needs a checkpointer to pause: compile it with one",
            )
        )
    else:
        problems.extend(_guard_tools(name, graph))
    if problems or channel is None:
        raise AssemblyError(problems)
    assert isinstance(role_spec, ChannelRoleSpec)
    attached = AttachedGraph(
        name=name, graph=graph, role=role, role_spec=role_spec, channel=channel
    )
    for tool in [*tools_of(graph), *tools]:
        runtime.assembly.attached_tools[tool.name] = tool_binding(
            tool.name, tool.description, schema_of(tool), role, role_spec, channel
        )
    return AttachedTrees(runtime, attached)


def _channel_of(runtime: Runtime, role: type) -> ChannelSpec | None:
    for implementation, spec in runtime.assembly.channels.items():
        if isinstance(implementation, type) and issubclass(implementation, role):
            return spec
    return None


def tool_nodes(graph: Any) -> list[ToolNode]:
    """The tool nodes of the graph (``create_agent``'s ``tools`` node) and of the subgraphs
    LangGraph finds in it (``get_subgraphs``: a compiled graph added as a node, an agent
    inside an agent), so their tools are guarded too."""
    graphs = [graph]
    with contextlib.suppress(Exception):  # a graph-like object without subgraphs of its own
        graphs += [subgraph for _, subgraph in graph.get_subgraphs(recurse=True)]
    found: list[ToolNode] = []
    for each in graphs:
        nodes = (getattr(node, "bound", None) for node in getattr(each, "nodes", {}).values())
        found += [node for node in nodes if isinstance(node, ToolNode) and node not in found]
    return found


def tools_of(graph: Any) -> list[BaseTool]:
    """The tools of the graph's tool nodes."""
    return [tool for node in tool_nodes(graph) for tool in node.tools_by_name.values()]


def _guard_tools(name: str, graph: Any) -> list[AssemblyViolation]:
    """Guard the tools of the graph's tool nodes; what cannot be guarded, as violations."""
    problems = []
    for node in tool_nodes(graph):
        try:
            guard_tool_node(node)
        except UnguardableToolNode as error:
            problems.append(
                AssemblyViolation(
                    rule="langgraph.tool-node",
                    component=name,
                    message=f"the tool node {node.name!r} cannot run its tools at most once: "
                    f"{error}",
                )
            )
    return problems
