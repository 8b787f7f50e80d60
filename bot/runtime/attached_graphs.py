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
our records: a pass takes the answers (RESOLVED → TAKEN) before it resumes with them; an answer
to a batch whose other questions still wait is taken by the move that recorded it
(``take_early``), so it is told at once, as our own steps' answers are.

Each question is shown, and its edits checked, by the role's model (the tools the graph asks
about are bound within it, their own schemas a second check: ``bot.runtime.graph_tools``).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.tools import BaseTool
from langgraph.types import Command, Interrupt
from pydantic_core import to_jsonable_python

from bot.components.specs import ChannelRoleSpec, ChannelSpec, spec_of
from bot.core.dtos import ToolCallApprovalAsk, ToolCallApprovalDecision
from bot.core.enums import PauseResolution, PauseStatus
from bot.core.errors import (
    AssemblyError,
    AssemblyViolation,
    PauseExpiredError,
    StepFailedError,
)
from bot.core.sensitive import sensitive_fields
from bot.runtime.assembly import GraphTools, ToolBinding
from bot.runtime.attached_tools import GUARD, ToolRunGuard, UnguardableToolNode, guard_tool_node
from bot.runtime.engine import Ended, Rested
from bot.runtime.expiry import expire, is_due, nobody_in_time
from bot.runtime.frame import RunFrame
from bot.runtime.graph_tools import bind_graph_tools, tool_nodes
from bot.runtime.pii import policies_of
from bot.runtime.question_context import graph_context, masked_context
from bot.runtime.seam import PausePlace, Taken, ask_once, new_pause, ran_with
from bot.runtime.services import Runtime, log
from bot.store.records import ExecutionRow, PauseRecord
from bot.store.tables import ATTACHED_PREFIX

APPROVAL_MARK = "countersign.request_approval"
"""The key that marks an interrupt value made by ``request_approval``."""

DECISION_KINDS = ("approve", "edit", "reject")
"""What ``request_approval`` takes unless told otherwise."""
KNOWN_KINDS = (*DECISION_KINDS, "respond")
"""Every kind of answer a question can take (LangChain's ``DecisionType``)."""

Shape = Literal["batched", "per_call", "approval"]


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


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachedGraph:
    """A compiled graph attached under ``name``; its questions go to ``role``."""

    name: str
    graph: Any  # a compiled LangGraph graph (Pregel): ainvoke, aget_state
    tools: GraphTools
    """Its role, the role's channel and the tools it asks about (``Assembly.attached_graphs``)."""

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
        state = (await self._attached.graph.aget_state(self.config(frame))).values
        records = []
        for index, action in enumerate(request.actions):
            place = PausePlace(
                agent=self._attached.name,
                checkpoint_ns=f"{request.shape}:{interrupt_id}",
                index=index,
                asked_at=now,
                position=index,
            )
            records.append(await self._ask_one(frame, place, action, state))
        return tuple(records)

    async def _ask_one(
        self, frame: RunFrame, place: PausePlace, action: Action, state: Any
    ) -> PauseRecord:
        """Record the question under the graph's role (a record there already keeps its own)
        and send it once."""
        if self._runtime.assembly.tool_of_agent(self._attached.name, action.tool) is not None:
            raise StepFailedError(
                f"the graph {self._attached.name} asks about {action.tool}, a tool of our agent "
                "of the same name: a question could not say whose tool it asks about; attach "
                "the graph under another name",
                execution_id=frame.execution_id,
            )
        binding = self._attached.tools.binding(action.tool)
        key = pause_key(frame, self._attached.name, place)
        request, reason = graph_context(
            state, tool=action.tool, arguments=action.args, call_id=action.call_id
        )
        sensitive = sensitive_fields(binding.spec.input) | sensitive_fields(binding.tool_schema)
        policies = policies_of(self._runtime.assembly, [])

        def masked(text: str | None) -> str | None:
            return masked_context(
                text, policies=policies, arguments=action.args, sensitive=sensitive
            )

        ask = ToolCallApprovalAsk(
            tool=action.tool,
            arguments=action.args,
            call_id=action.call_id,
            description=masked(action.description),  # the middleware's default repeats the args
            allowed_decisions=action.allowed,
            request=masked(request),
            stated_reason=masked(reason),
        )
        record = await self._runtime.store.get_or_create(
            new_pause(
                binding,
                frame,
                key,
                place,
                ask,
                asked_at=place.asked_at or self._runtime.clock.now(),
                channel=(binding.channel or self._attached.tools.channel).name,
            )
        )
        sent = await ask_once(self._runtime, self.binding(record), frame, record, place)
        return sent.record if isinstance(sent, Taken) else sent

    async def _expire_due(self, records: tuple[PauseRecord, ...]) -> tuple[PauseRecord, ...]:
        """Close the questions whose expiry has come (EXPIRED, their channels told once); the
        records as they then are."""
        now_as: list[PauseRecord] = []
        for record in records:
            due = record.status is PauseStatus.PENDING and is_due(
                self._runtime, self.binding(record), record
            )
            if due:  # None: answered or closed meanwhile, read it as it is
                closed = await expire(self._runtime, record)
                found = closed or await self._runtime.store.find_by_key(record.idempotency_key)
                record = found or record
            now_as.append(record)
        return tuple(now_as)

    def _answer(self, frame: RunFrame, shape: Shape, records: Sequence[PauseRecord]) -> Any | None:
        """The resume value of an interrupt once every question it asked is settled — taken,
        or expired (``_expired``); None while one waits."""
        decisions = []
        for record in records:
            decision = _decision_of(record)
            if decision is None and record.resolution is PauseResolution.EXPIRED:
                decision = self._expired(frame, record)
            if decision is None:
                return None
            decisions.append(decision)
        return answer_value(shape, decisions, records)

    def _expired(self, frame: RunFrame, record: PauseRecord) -> ToolCallApprovalDecision:
        """What the asker of an expired question reads, in a decision it offered: a rejection
        saying that nobody approved in time, else that as its response in place of the tool;
        the pass fails with ``PauseExpiredError`` (``pause.expired``) when the timing says so
        (``OnExpiry.FAIL``) or when the question takes neither (LangChain would refuse it)."""
        binding, execution_id = self.binding(record), frame.execution_id
        try:
            said = nobody_in_time(
                binding, record.ask.tool, record.closes_at, execution_id=execution_id
            )
        except PauseExpiredError as failing:
            _log_expired(frame, record, failing)
            raise
        allowed = record.ask.allowed_decisions
        if allowed is None or "reject" in allowed:
            return ToolCallApprovalDecision(approved=False, reason=said)
        if "respond" in allowed:
            return ToolCallApprovalDecision(approved=False, response=said)
        untold = PauseExpiredError(
            f"{said}, and the question takes only {', '.join(allowed)}: the graph cannot be "
            "told so (it offers neither reject nor respond), so the run fails",
            execution_id=execution_id,
        )
        _log_expired(frame, record, untold)
        raise untold

    def binding(self, record: PauseRecord) -> ToolBinding:
        """The binding ``record`` was asked under: its tool within this graph, under its role."""
        found = self._runtime.assembly.binding_of(
            record.ask.tool, agent=record.agent, role=record.role
        )
        return found if found is not None else self._attached.tools.binding(record.ask.tool)

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

    def first_pass(self, frame: RunFrame) -> contextlib.AbstractContextManager[None]:
        """An attached graph runs on its caller's thread, which may hold checkpoints already:
        its reads all go to the database."""
        return contextlib.nullcontext()

    async def take_early(
        self, frame: RunFrame, answered: tuple[PauseRecord, ...]
    ) -> tuple[PauseRecord, ...]:
        """Take the answers of a batch answered in part (RESOLVED → TAKEN): they are final,
        and the interrupt is resumed with them once its last question is settled."""
        return tuple([await self._take(frame, record) for record in answered])

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
        binding = self.binding(record)
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

    async def returned(self, frame: RunFrame) -> Mapping[str, str]:
        """Nothing: the graph's tools save their results as they return (``attached_tools``)."""
        return {}


def _shape_of(record: PauseRecord) -> Shape:
    shape = record.node_id.split(":", 1)[0]
    if shape == "approval":
        return "approval"
    return "per_call" if shape == "per_call" else "batched"


def _log_expired(frame: RunFrame, record: PauseRecord, error: PauseExpiredError) -> None:
    log.warning(
        "%s: %s (execution_id=%s tenant_id=%s)",
        error.code,
        error.message,
        frame.execution_id,
        frame.tenant_id,
        extra={
            "execution_id": frame.execution_id,
            "tenant_id": frame.tenant_id,
            "role": record.role,
            "outcome": "expired",
        },
    )


def pause_key(frame: RunFrame, graph: str, place: PausePlace) -> str:
    """(graph, thread, interrupt id, action index) within the tree."""
    return f"{frame.root_execution_id}|{ATTACHED_PREFIX}{graph}|{frame.thread_id}|" + (
        f"{place.checkpoint_ns}#{place.index}"
    )


def attach_graph(
    runtime: Runtime,
    name: str,
    graph: Any,
    role: type,
    tools: Sequence[BaseTool] = (),
    asked_tools: Sequence[str] | None = None,
    roles: Mapping[str, type] | None = None,
) -> AttachedTrees:
    """Check what is attached, guard its tools and bind the ones it asks ``role`` about (and
    those ``roles`` names, each under its own role; the role's model must fit them:
    ``bot.runtime.graph_tools``); every problem at once."""
    problems: list[AssemblyViolation] = []
    role_spec, channel = _role_of(runtime, name, role, "role", problems)
    per_tool: dict[str, tuple[ChannelRoleSpec, ChannelSpec]] = {}
    for tool_name, tool_role in (roles or {}).items():
        found = _role_of(runtime, name, tool_role, f"roles[{tool_name!r}]", problems)
        if found[0] is not None and found[1] is not None:
            per_tool[tool_name] = (found[0], found[1])
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
    bindings: dict[str, ToolBinding] = {}
    if role_spec is not None and channel is not None and not problems:
        bindings, unbound = bind_graph_tools(
            name,
            graph,
            role_spec,
            channel,
            tools=tools,
            asked_tools=asked_tools,
            roles=per_tool,
        )
        problems.extend(unbound)
        problems.extend(_name_problems(runtime, name, bindings))
    if problems or role_spec is None or channel is None:
        raise AssemblyError(problems)
    graph_tools = GraphTools(role=role_spec, channel=channel, tools=bindings, roles=per_tool)
    runtime.assembly.attached_graphs[name] = graph_tools
    return AttachedTrees(runtime, AttachedGraph(name=name, graph=graph, tools=graph_tools))


def _role_of(
    runtime: Runtime, name: str, role: type, argument: str, problems: list[AssemblyViolation]
) -> tuple[ChannelRoleSpec | None, ChannelSpec | None]:
    """``role``'s spec and the channel implementing it; a violation when it is neither a role
    of the application nor implemented there."""
    role_spec = spec_of(role)
    if not isinstance(role_spec, ChannelRoleSpec) or role not in runtime.assembly.roles:
        problems.append(
            AssemblyViolation(
                rule="langgraph.role",
                component=name,
                message=f"{argument}={getattr(role, '__name__', role)!s} must be a "
                "@channel_role implemented by a channel of the application (channels=[...])",
            )
        )
        return None, None
    return role_spec, runtime.assembly.channel_of_role(role_spec)


def _name_problems(
    runtime: Runtime, name: str, bindings: Mapping[str, ToolBinding]
) -> list[AssemblyViolation]:
    """A graph named like one of our agents that asks about a tool of that agent's name: the
    records of both questions (which keep the asker's name and the tool's) would look alike."""
    alike = sorted(tool for tool in bindings if runtime.assembly.tool_of_agent(name, tool))
    if not alike:
        return []
    return [
        AssemblyViolation(
            rule="langgraph.name",
            component=name,
            message=f"an agent of the application has this name and a tool named "
            f"{', '.join(alike)} too: a question could not say whose tool it asks about; "
            "give the graph another name",
        )
    ]


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
