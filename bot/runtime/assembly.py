"""Assembly: walk an application's components once, check every rule, index what runs.

Every broken rule is collected and reported together in one ``AssemblyError``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from pydantic import BaseModel

from bot.components.decorators import DEFAULT_TOOL_TIMEOUT
from bot.components.flow import FlowBuilder
from bot.components.specs import (
    AgentSpec,
    ApplicationSpec,
    ChannelRoleSpec,
    ChannelSpec,
    ComponentSpec,
    Flow,
    FlowStep,
    PolicySpec,
    ReplyInterpreterSpec,
    ToolSpec,
    WorkflowFinishSpec,
    WorkflowSpec,
    WorkflowStartSpec,
    spec_of,
)
from bot.core.budget import Budget
from bot.core.channel import ChannelOf
from bot.core.context import ExecutionContext
from bot.core.dtos import REJECT_REASONS, ToolCallApprovalDecision
from bot.core.enums import DecidedBy, PauseAnswerer
from bot.core.errors import AssemblyError, AssemblyViolation
from bot.core.grants import GRANT_SCOPE_KINDS
from bot.core.pii import PiiPolicy
from bot.core.timing import PauseTiming
from bot.runtime.decision_models import answer_dto_of, is_decision_model
from bot.runtime.model_overrides import override_for


class ServesModels(Protocol):
    def serves(self, model: str) -> bool: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolBinding:
    """A tool and the channel that asks before it runs (if any)."""

    spec: ToolSpec
    role: ChannelRoleSpec | None
    channel: ChannelSpec | None
    tool_schema: type[BaseModel] | None = None
    """An attached graph's tool: its own arguments' schema. ``spec.input`` is then the role's
    model (what the approver is shown and checked by); an edit must make a valid input of
    this too. None for our own tools (their input is the role's model or a subclass of it)."""

    @property
    def answered_by(self) -> PauseAnswerer:
        if self.role is None:
            return PauseAnswerer.THREAD_OWNER
        return PauseAnswerer(self.role.answered_by)

    @property
    def timing(self) -> PauseTiming | None:
        """The tool's own timing, else its role's."""
        if self.spec.timing is not None:
            return self.spec.timing
        return None if self.role is None else self.role.timing

    @property
    def policy(self) -> type | None:
        """The ``@policy`` consulted before its questions are sent: the tool's own, else its
        role's; None: a person is asked."""
        if self.spec.policy is not None:
            return self.spec.policy
        return None if self.role is None else self.role.policy

    @property
    def role_name(self) -> str:
        if self.role is not None:
            return self.role.name
        return self.channel.name if self.channel is not None else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphTools:
    """What answering needs of one attached graph (``App.langgraph``): its role, the role's
    channel, and the bindings of the tools it asks about, by name within the graph."""

    role: ChannelRoleSpec
    channel: ChannelSpec
    tools: Mapping[str, ToolBinding]
    roles: Mapping[str, tuple[ChannelRoleSpec, ChannelSpec]] = field(default_factory=dict)
    """The role (and its channel) asked about a tool named apart (``App.langgraph(...,
    roles={tool: Role})``); every other tool is asked under ``role``."""

    def binding(self, tool: str) -> ToolBinding:
        """The tool's binding; a tool the graph has no schema for (a ``request_approval``
        question) is checked by its role's model alone."""
        known = self.tools.get(tool)
        if known is not None:
            return known
        role, channel = self.roles.get(tool, (self.role, self.channel))
        return role_binding(tool, role, channel)


def role_binding(
    tool: str,
    role: ChannelRoleSpec,
    channel: ChannelSpec | None,
    *,
    description: str = "",
    tool_schema: type[BaseModel] | None = None,
) -> ToolBinding:
    """The binding of a question asked about ``tool`` by an attached graph under ``role``:
    the approver is shown, and an edit checked by, the role's model (and ``tool_schema``)."""
    spec = ToolSpec(
        name=tool,
        description=description,
        cls=_NotRunHere,
        input=role.approves,
        output=None,
        channel=role.cls,
        timeout=DEFAULT_TOOL_TIMEOUT,
    )
    return ToolBinding(spec=spec, role=role, channel=channel, tool_schema=tool_schema)


class _NotRunHere:
    """The tool of an attached graph runs in the graph, never through Countersign."""


@dataclass(slots=True)
class Assembly:
    application: ApplicationSpec
    workflows: dict[type, WorkflowSpec] = field(default_factory=dict)
    flows: dict[type, Flow] = field(default_factory=dict)
    agents: dict[type, AgentSpec] = field(default_factory=dict)
    tools: dict[type, ToolBinding] = field(default_factory=dict)
    roles: dict[type, ChannelRoleSpec] = field(default_factory=dict)
    channels: dict[type, ChannelSpec] = field(default_factory=dict)
    interpreters: dict[type, ReplyInterpreterSpec] = field(default_factory=dict)
    policies: dict[type, PolicySpec] = field(default_factory=dict)
    starts: dict[type, WorkflowStartSpec] = field(default_factory=dict)
    finishes: dict[type, WorkflowFinishSpec] = field(default_factory=dict)
    roles_by_name: dict[str, ChannelRoleSpec] = field(default_factory=dict)
    attached_graphs: dict[str, GraphTools] = field(default_factory=dict)
    """The graphs attached to the App (``App.langgraph``), by name: their tools are bound
    within the graph, so two graphs (or a graph and our own agents) may name a tool alike."""

    def tool_named(self, name: str) -> ToolBinding | None:
        """One of our own tools, by its name (unique in an application)."""
        for binding in self.tools.values():
            if binding.spec.name == name:
                return binding
        return None

    def binding_of(self, tool: str, *, agent: str, role: str) -> ToolBinding | None:
        """The binding a question about ``tool`` was asked under, from what its record keeps:
        ``agent`` (our agent's name, or the attached graph's) and ``role`` (the role's name).

        An attached graph's tool is looked up within that graph, under the role the question
        was asked under (a graph attached again under another role: the questions waiting
        keep theirs); a question of a graph not attached (yet) in this process is checked by
        its role's model. Our own agent's tool is its own."""
        asked_under = self.roles_by_name.get(role)
        native = self.tool_of_agent(agent, tool)
        if native is not None:  # never a graph's: attach refuses a graph asking about it
            return native
        graph = self.attached_graphs.get(agent)
        if graph is not None:
            return _under(graph.binding(tool), asked_under, self)
        native = self.tool_named(tool)
        if asked_under is None or (native is not None and native.role_name == role):
            return native  # our own tool (also for a caller that did not name the agent)
        return role_binding(tool, asked_under, self.channel_of_role(asked_under))

    def tool_of_agent(self, agent: str, tool: str) -> ToolBinding | None:
        """The tool named ``tool`` of our agent named ``agent``."""
        for spec in self.agents.values():
            if spec.name != agent:
                continue
            for cls in spec.tools:
                binding = self.tools.get(cls)
                if binding is not None and binding.spec.name == tool:
                    return binding
        return None

    def channel_of_role(self, role: ChannelRoleSpec) -> ChannelSpec | None:
        """The channel of the application implementing ``role`` (one per application)."""
        for implementation, spec in self.channels.items():
            if isinstance(implementation, type) and issubclass(implementation, role.cls):
                return spec
        return None


def _under(binding: ToolBinding, role: ChannelRoleSpec | None, assembly: Assembly) -> ToolBinding:
    """An attached graph's ``binding`` under ``role``, the role its question was asked under."""
    if role is None or binding.role is None or role.name == binding.role.name:
        return binding
    spec = dataclasses.replace(binding.spec, input=role.approves, channel=role.cls)
    return dataclasses.replace(
        binding, spec=spec, role=role, channel=assembly.channel_of_role(role)
    )


class _Checker:
    def __init__(self, application: type, providers: Sequence[ServesModels]) -> None:
        self.violations: list[AssemblyViolation] = []
        self.providers = providers
        self._names: dict[tuple[str, str], type] = {}
        self.visiting: set[type] = set()
        spec = spec_of(application)
        if not isinstance(spec, ApplicationSpec):
            raise AssemblyError(
                [
                    AssemblyViolation(
                        rule="application.not-an-application",
                        component=getattr(application, "__name__", repr(application)),
                        message="decorate the class with @application(...)",
                    )
                ]
            )
        self.assembly = Assembly(application=spec)

    def fail(self, rule: str, component: str, message: str) -> None:
        violation = AssemblyViolation(rule=rule, component=component, message=message)
        if violation not in self.violations:
            self.violations.append(violation)

    def spec(self, cls: Any, expected: type[ComponentSpec], rule: str, where: str) -> Any:
        spec = spec_of(cls)
        if not isinstance(spec, expected):
            name = getattr(cls, "__name__", repr(cls))
            kind = expected.__name__.removesuffix("Spec")
            self.fail(rule, name, f"named in {where} but not decorated as a {kind}")
            return None
        self.name(spec)
        return spec

    def name(self, spec: ComponentSpec) -> None:
        if spec.suffix and (not spec.name.endswith(spec.suffix) or spec.name == spec.suffix):
            self.fail(
                "name.kind-suffix",
                spec.name,
                f"a {spec.kind}'s name must end with '{spec.suffix}' (e.g. 'refund{spec.suffix}')",
            )
        seen = self._names.setdefault((spec.kind, spec.name), spec.cls)
        if seen is not spec.cls:
            self.fail("name.duplicate", spec.name, f"two different {spec.kind}s share this name")

    def model(self, component: type, name: str, model: Any) -> None:
        if model is None:
            self.fail("model.missing", name, "name a model (a model name or a chat model)")
            return
        if not isinstance(model, str) or override_for(component) is not None:
            return
        if not any(provider.serves(model) for provider in self.providers):
            self.fail(
                "model.unserved",
                name,
                f"no provider serves the model '{model}': configure one that serves it "
                "(COUNTERSIGN_MODEL_BASE_URL / COUNTERSIGN_MODEL_NAMES) or pass a chat model",
            )

    def deps(self, spec: ComponentSpec) -> None:
        for dep in spec.deps:
            if dep is ExecutionContext:
                continue
            if not isinstance(dep, type):
                self.fail("deps.unresolvable", spec.name, f"{dep!r} is not a class")


def assemble(application: type, providers: Sequence[ServesModels] = ()) -> Assembly:
    """Check every rule of ``application`` and return its index; raise ``AssemblyError``."""
    checker = _Checker(application, providers)
    app = checker.assembly.application
    for implementation in app.channels:
        _check_implementation(checker, implementation)
    if not app.workflows and not app.channels:
        checker.fail(
            "application.no-workflows",
            app.name,
            "name at least one workflow, or the channels of the roles its attached graphs ask "
            "(channels=[...]: an application of attached graphs and roles alone)",
        )
    for workflow in app.workflows:
        _check_workflow(checker, workflow)
    if app.entry_workflow is not None and app.entry_workflow not in app.workflows:
        checker.fail("application.entry-workflow", app.name, "the entry workflow is not listed")
    _check_interpreters(checker)
    _check_escalations(checker)
    if checker.violations:
        raise AssemblyError(checker.violations)
    return checker.assembly


def _check_implementation(checker: _Checker, implementation: type) -> None:
    spec = checker.spec(implementation, ChannelSpec, "channel.not-a-channel", "channels=[...]")
    if spec is None:
        return
    checker.deps(spec)
    if not issubclass(implementation, ChannelOf):
        checker.fail(
            "channel.not-a-channel", spec.name, "a channel must subclass a role or ChannelOf"
        )
        return
    if implementation.send is ChannelOf.send:
        checker.fail("channel.no-send", spec.name, "implement async def send(self, ask)")
    checker.assembly.channels[implementation] = spec
    for role_cls in _roles_of(implementation):
        role = _check_role(checker, role_cls)
        if role is None:
            continue
        for other_impl, other in checker.assembly.channels.items():
            if other_impl is not implementation and role_cls in _roles_of(other_impl):
                checker.fail(
                    "channel.ambiguous",
                    role.name,
                    f"implemented by both {other.name} and {spec.name}: keep one per application",
                )


def _check_escalations(checker: _Checker) -> None:
    """A channel that declares where its questions escalate needs an ``escalate_after`` on its
    role's timing or on one of the role's tools': else nothing ever escalates."""
    tools = checker.assembly.tools.values()
    for implementation, spec in checker.assembly.channels.items():
        if not getattr(implementation, "escalates", False):
            continue
        for role_cls in _roles_of(implementation):
            role = checker.assembly.roles.get(role_cls)
            if role is None:
                continue
            timings = [role.timing, *(b.spec.timing for b in tools if b.role is role)]
            if not any(t is not None and t.escalate_after is not None for t in timings):
                checker.fail(
                    "timing.escalation-unused",
                    spec.name,
                    f"it escalates (escalate_to=...) but neither the role {role.name} nor any of "
                    "its tools has timing=PauseTiming(escalate_after=...): nothing would escalate",
                )


def _roles_of(implementation: type) -> list[type]:
    return [
        base for base in implementation.__mro__[1:] if isinstance(spec_of(base), ChannelRoleSpec)
    ]


def _check_role(checker: _Checker, role_cls: type) -> ChannelRoleSpec | None:
    role = spec_of(role_cls)
    if not isinstance(role, ChannelRoleSpec):
        return None
    if role_cls in checker.assembly.roles:
        return role
    checker.name(role)
    if not isinstance(role.answered_by, PauseAnswerer):
        checker.fail(
            "channel-role.answered-by",
            role.name,
            "answered_by must be PauseAnswerer.THREAD_OWNER or PauseAnswerer.CHANNEL",
        )
    if not (isinstance(role.approves, type) and issubclass(role.approves, BaseModel)):
        checker.fail("channel-role.approves", role.name, "approves must be a pydantic model")
    if role.separation_of_duties and role.answered_by is PauseAnswerer.THREAD_OWNER:
        checker.fail(
            "channel-role.separation-of-duties",
            role.name,
            "separation_of_duties refuses the thread's owner, and only the thread's owner may "
            "answer a THREAD_OWNER role: nobody could answer it (use PauseAnswerer.CHANNEL)",
        )
    if role.reject_reason not in REJECT_REASONS:
        checker.fail(
            "channel-role.reject-reason",
            role.name,
            f'reject_reason must be "required" or "optional", not {role.reject_reason!r}',
        )
    _check_required_approvals(checker, role)
    _check_timing(checker, role.name, role.timing)
    check_policy(checker, role.policy, role.name)
    wrong = [kind for kind in role.grants if kind not in GRANT_SCOPE_KINDS]
    if wrong or isinstance(role.grants, str):
        checker.fail(
            "channel-role.grants",
            role.name,
            f"grants= names scopes of {', '.join(GRANT_SCOPE_KINDS)}, not {wrong or role.grants!r}",
        )
    checker.assembly.roles[role_cls] = role
    checker.assembly.roles_by_name[role.name] = role
    return role


MAX_REQUIRED_APPROVALS: Final = 10
"""More approvals than this for one call is a mistake, not a policy."""


def _check_required_approvals(checker: _Checker, role: ChannelRoleSpec) -> None:
    """``[channel-role.required-approvals]``: a whole number of approvers from 1, and several
    only where several people may answer (a CHANNEL role: a thread has one owner)."""
    count: object = role.required_approvals
    if (
        not isinstance(count, int)
        or isinstance(count, bool)
        or not 1 <= count <= MAX_REQUIRED_APPROVALS
    ):
        checker.fail(
            "channel-role.required-approvals",
            role.name,
            f"required_approvals must be a whole number from 1 to {MAX_REQUIRED_APPROVALS}, "
            f"not {count!r}",
        )
    elif count > 1 and role.answered_by is PauseAnswerer.THREAD_OWNER:
        checker.fail(
            "channel-role.required-approvals",
            role.name,
            f"required_approvals={count} needs that many approvers, and a THREAD_OWNER role "
            "has one (the thread's owner): use PauseAnswerer.CHANNEL",
        )
    elif count > 1 and role.grants:
        checker.fail(
            "channel-role.required-approvals",
            role.name,
            f"required_approvals={count} asks several people, and a standing grant is one "
            "person's approval of calls to come: give the role no grants=",
        )


def _check_timing(checker: _Checker, name: str, timing: object) -> None:
    """``[timing.*]``: a ``PauseTiming`` whose times make sense together."""
    if timing is None:
        return
    if not isinstance(timing, PauseTiming):
        checker.fail("timing.type", name, "timing must be a bot.PauseTiming")
        return
    for rule, problem in timing.problems():
        checker.fail(rule, name, problem)


def check_policy(checker: _Checker, policy: object, where: str) -> None:
    """``[policy.*]``: a ``policy=`` names a ``@policy`` class with ``decide(self, ask)``."""
    if policy is None:
        return
    spec = checker.spec(policy, PolicySpec, "policy.not-a-policy", f"{where}'s policy=")
    if spec is None or policy in checker.assembly.policies:
        return
    checker.deps(spec)
    checker.assembly.policies[spec.cls] = spec
    if spec.combine is not None:
        if not spec.parts:
            checker.fail("policy.no-parts", spec.name, "a composed policy names its policies")
        for part in spec.parts:
            check_policy(checker, part, spec.name)
        return
    method = getattr(policy, "decide", None)
    if not callable(method) or not _takes_one_argument(method):
        checker.fail(
            "policy.no-decide-method",
            spec.name,
            "a policy implements decide(self, ask) -> PolicyDecision (sync or async)",
        )


def _check_workflow(checker: _Checker, workflow: type) -> None:
    spec = checker.spec(workflow, WorkflowSpec, "workflow.not-a-workflow", "workflows=[...]")
    if spec is None:
        return
    checker.assembly.workflows[workflow] = spec
    checker.visiting.add(workflow)
    try:
        _check_flow(checker, workflow, spec)
    finally:
        checker.visiting.discard(workflow)


def _check_flow(checker: _Checker, workflow: type, spec: WorkflowSpec) -> None:
    builders = [f for f in spec.flows if isinstance(f, FlowBuilder)]
    if len(builders) != 1 or len(spec.flows) != 1:
        checker.fail(
            "workflow.flow", spec.name, "give exactly one flow: start(...)...to_finish(...)"
        )
        return
    flow = builders[0].build()
    checker.assembly.flows[workflow] = flow
    start = checker.spec(flow.start, WorkflowStartSpec, "workflow.start", f"{spec.name}'s flow")
    if start is not None:
        checker.assembly.starts[flow.start] = start
    if flow.finish is None:
        checker.fail("workflow.flow", spec.name, "end the flow with .to_finish(...)")
    else:
        finish = checker.spec(flow.finish, WorkflowFinishSpec, "workflow.finish", spec.name)
        if finish is not None:
            checker.assembly.finishes[flow.finish] = finish
    if not flow.steps:
        checker.fail("workflow.flow", spec.name, "add at least one step: .to_agent(...)")
    for step in flow.steps:
        if isinstance(step, FlowStep):
            _check_agent(checker, step.agent, spec.name)
            continue
        for target in step.targets:
            _check_launch_target(checker, target, spec.name)


def _check_launch_target(checker: _Checker, target: type, where: str) -> None:
    target_spec = spec_of(target)
    if isinstance(target_spec, AgentSpec):
        _check_agent(checker, target, where)
    elif isinstance(target_spec, WorkflowSpec):
        if target in checker.visiting:
            checker.fail("workflow.cycle", target_spec.name, f"runs itself as a step of {where}")
            return
        if target not in checker.assembly.workflows:
            _check_workflow(checker, target)
    else:
        checker.fail(
            "flow.launch-target",
            getattr(target, "__name__", repr(target)),
            f"launched in {where} but neither an @agent nor a @workflow",
        )


def _check_agent(checker: _Checker, agent_cls: type, where: str) -> None:
    spec = checker.spec(agent_cls, AgentSpec, "agent.not-an-agent", where)
    if spec is None or agent_cls in checker.assembly.agents:
        return
    checker.assembly.agents[agent_cls] = spec
    checker.model(agent_cls, spec.name, spec.model)
    for tool_cls in spec.tools:
        _check_tool(checker, tool_cls, spec.name)


def _check_tool(checker: _Checker, tool_cls: type, where: str) -> None:
    spec = checker.spec(tool_cls, ToolSpec, "tool.not-a-tool", where)
    if spec is None or tool_cls in checker.assembly.tools:
        return
    checker.deps(spec)
    if not (isinstance(spec.input, type) and issubclass(spec.input, BaseModel)):
        checker.fail("tool.input", spec.name, "input must be a pydantic model")
    if not callable(getattr(tool_cls, "run", None)):
        checker.fail("tool.no-run-method", spec.name, "implement run(self, input)")
    _check_timing(checker, spec.name, spec.timing)
    if spec.timing is not None and spec.channel is None:
        checker.fail("timing.no-channel", spec.name, "timing needs channel=...: nothing is asked")
    check_policy(checker, spec.policy, spec.name)
    if spec.policy is not None and spec.channel is None:
        checker.fail("policy.no-channel", spec.name, "policy needs channel=...: nothing is asked")
    role: ChannelRoleSpec | None = None
    channel: ChannelSpec | None = None
    if spec.channel is not None:
        role, channel = _channel_of_tool(checker, spec)
    checker.assembly.tools[tool_cls] = ToolBinding(spec=spec, role=role, channel=channel)


def _channel_of_tool(
    checker: _Checker, spec: ToolSpec
) -> tuple[ChannelRoleSpec | None, ChannelSpec | None]:
    named = spec.channel
    assert named is not None
    named_spec = spec_of(named)
    if isinstance(named_spec, ChannelSpec):  # a concrete channel named as is
        checker.name(named_spec)
        checker.assembly.channels.setdefault(named, named_spec)
        return None, named_spec
    if not isinstance(named_spec, ChannelRoleSpec):
        checker.fail(
            "tool.channel",
            spec.name,
            f"channel={getattr(named, '__name__', named)!s} is neither a @channel_role "
            "nor a @channel",
        )
        return None, None
    role = _check_role(checker, named)
    implementations = [
        (impl, impl_spec)
        for impl, impl_spec in checker.assembly.channels.items()
        if named in _roles_of(impl)
    ]
    if not implementations:
        checker.fail(
            "channel.unimplemented",
            named_spec.name,
            f"the tool {spec.name} asks this role, but no channel in the application implements it",
        )
        return role, None
    if (
        role is not None
        and isinstance(role.approves, type)
        and isinstance(spec.input, type)
        and not issubclass(spec.input, role.approves)
    ):
        checker.fail(
            "channel.approves-mismatch",
            spec.name,
            f"the role {role.name} approves {role.approves.__name__}, the tool takes "
            f"{spec.input.__name__}",
        )
    return role, implementations[0][1]


def _check_interpreters(checker: _Checker) -> None:
    owners: dict[type, str] = {}
    for role in checker.assembly.roles.values():
        interpreter = role.reply_interpreter
        if interpreter is None:
            continue
        spec = spec_of(interpreter)
        if not isinstance(spec, ReplyInterpreterSpec):
            checker.fail(
                "reply-interpreter.not-an-interpreter",
                role.name,
                f"{getattr(interpreter, '__name__', interpreter)!s} has no @reply_interpreter",
            )
            continue
        if interpreter in owners and owners[interpreter] != role.name:
            checker.fail(
                "channel.shared-interpreter",
                spec.name,
                f"used by the roles {owners[interpreter]} and {role.name}: one interpreter "
                "belongs to one role",
            )
        owners.setdefault(interpreter, role.name)
        if interpreter in checker.assembly.interpreters:
            continue
        checker.name(spec)
        checker.deps(spec)
        checker.assembly.interpreters[interpreter] = spec
        if spec.decided_by is DecidedBy.CODE:
            method = getattr(interpreter, "interpret", None)
            if not callable(method) or not _takes_one_argument(method):
                checker.fail(
                    "reply-interpreter.no-interpret-method",
                    spec.name,
                    "a CODE interpreter implements interpret(self, input) -> ReplyInterpretation",
                )
        else:
            _check_model_interpreter(checker, role, interpreter, spec)
    _check_model_policies(checker)


_PROMPT_URL_SCHEMES = ("file:", "data:", "http://", "https://")


def _check_model_interpreter(
    checker: _Checker, role: ChannelRoleSpec, interpreter: type, spec: ReplyInterpreterSpec
) -> None:
    """A MODEL interpreter: its model is served, fits its role's answer, its prompt URLs read."""
    checker.model(interpreter, spec.name, spec.model)
    answer = answer_dto_of(role)
    if answer is not ToolCallApprovalDecision and is_decision_model(
        interpreter, spec.model, checker.providers
    ):
        checker.fail(
            "reply-interpreter.decision-model",
            spec.name,
            f"the role {role.name} is answered with {answer.__name__}, which needs more than the "
            "yes / no a decision model gives: use a chat model (it answers through a tool)",
        )
    for url in spec.prompt_urls:
        if not isinstance(url, str) or not url.lower().startswith(_PROMPT_URL_SCHEMES):
            checker.fail(
                "reply-interpreter.prompt-url",
                spec.name,
                f"prompt URL {url!r} is not a file:, data: or http(s): URL",
            )


def _check_model_policies(checker: _Checker) -> None:
    """Budgets are ``bot.Budget``s and PII policies ``bot.PiiPolicy``s."""
    application = checker.assembly.application
    owners: list[tuple[str, Any, tuple[Any, ...]]] = [
        (application.name, application.budget, application.pii_policies),
        *((w.name, w.budget, w.pii_policies) for w in checker.assembly.workflows.values()),
    ]
    for name, budget, policies in owners:
        if budget is not None and not isinstance(budget, Budget):
            checker.fail("budget.invalid", name, "budget= takes a bot.Budget(...)")
        if any(not isinstance(policy, PiiPolicy) for policy in policies):
            checker.fail(
                "pii-policy.invalid",
                name,
                "pii_policies= takes bot.PiiPolicy(detector=..., action=...) values",
            )


def _takes_one_argument(method: Any) -> bool:
    try:
        parameters = list(inspect.signature(method).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) == 2 or any(p.kind is p.VAR_POSITIONAL for p in parameters)
