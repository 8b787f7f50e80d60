"""What the decorators record on a class: one frozen spec per component kind.

The decorators check nothing beyond their argument types; every rule is checked at assembly
(``App.create``) so that all broken rules are reported at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel

from bot.core.dtos import RejectReason
from bot.core.enums import DecidedBy, PauseAnswerer
from bot.core.timing import PauseTiming

if TYPE_CHECKING:  # type-only: LangChain loads only when models are needed
    from langchain_core.language_models import BaseChatModel

    from bot.components.joins import JoinErrorHandler, JoinPolicy
    from bot.core.budget import Budget
    from bot.core.pii import PiiPolicy
    from bot.core.providers import ModelProvider

SPEC_ATTRIBUTE = "__countersign_spec__"

StepErrorHandler = Callable[[BaseException], str]
"""``.on_error(ErrorClass, handler)``: the handler's text is the failed step's answer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ComponentSpec:
    name: str
    description: str
    cls: type
    deps: tuple[type, ...] = ()

    kind: str = "component"
    suffix: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec(ComponentSpec):
    input: type[BaseModel]
    output: type[BaseModel] | None
    channel: type | None
    timeout: timedelta
    timing: PauseTiming | None = None
    """Overrides the role's timing for this tool's questions."""
    question: str | None = None
    """How its questions read, a template of its arguments ("Refund {amount} to order
    {order_id}?"); None: the role's, else the description."""
    policy: type | None = None
    """The ``@policy`` consulted before this tool's questions are sent (else its role's)."""
    kind: str = "tool"
    suffix: str = "-tool"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSpec(ComponentSpec):
    prompt: str
    model: str | BaseChatModel  # a model name, or a chat model instance
    tools: tuple[type, ...]
    max_tool_loop_iterations: int
    kind: str = "agent"
    suffix: str = "-agent"


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowStartSpec(ComponentSpec):
    input: type[BaseModel]
    kind: str = "workflow-start"
    suffix: str = "-workflow-start"


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowFinishSpec(ComponentSpec):
    output: type[BaseModel]
    kind: str = "workflow-finish"
    suffix: str = "-workflow-finish"


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowStep:
    """One step of a linear flow: an agent."""

    agent: type
    on_error: tuple[tuple[type[BaseException], StepErrorHandler], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LaunchStep:
    """A step that launches branches at once: agents or child workflows, joined by a policy.

    ``items`` set: one branch per item of the list in the state (a per-item launch of
    ``targets[0]``). A single workflow target with no items is a workflow run as a step.
    """

    targets: tuple[type, ...]
    join: JoinPolicy
    on_join_error: tuple[tuple[type[BaseException], JoinErrorHandler], ...] = ()
    items: Callable[[str], Sequence[str]] | None = None
    max_concurrency: int | None = None
    on_error: tuple[tuple[type[BaseException], StepErrorHandler], ...] = ()


Step = FlowStep | LaunchStep


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    start: type
    returns: type[BaseModel] | None
    steps: tuple[Step, ...]
    finish: type | None


class BuildsFlow(Protocol):
    """What ``@workflow(flow=[...])`` takes: a flow builder (``start(...)...``)."""

    def build(self) -> Flow: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowSpec(ComponentSpec):
    version: str
    flows: tuple[BuildsFlow, ...]  # exactly one, checked at assembly
    budget: Budget | None = None
    pii_policies: tuple[PiiPolicy, ...] = ()
    kind: str = "workflow"
    suffix: str = "-workflow"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelRoleSpec(ComponentSpec):
    approves: type[BaseModel]
    answered_by: PauseAnswerer  # checked at assembly too, for callers without a type checker
    reply_interpreter: type | None
    separation_of_duties: bool = False
    """The execution's owner may not answer (``SelfApprovalError``)."""
    timing: PauseTiming | None = None
    """Reminders, escalation and expiry of the role's questions."""
    reject_reason: RejectReason = "optional"
    """``"required"``: a rejection of the role's questions must say why, in every channel."""
    question: str | None = None
    """How its questions read, a template of the arguments; a tool's own ``question`` wins."""
    policy: type | None = None
    """The ``@policy`` consulted before the role's questions are sent."""
    grants: tuple[str, ...] = ()
    """The scopes of standing grants its approvers may give (``thread``, ``requester``,
    ``agent``); none: no grants (the default)."""
    required_approvals: int = 1
    """How many distinct approvers must approve the same arguments before the call runs (one
    rejection rejects; the requester never counts)."""
    kind: str = "channel-role"

    @property
    def separates_duties(self) -> bool:
        """Whether the execution's owner is refused: ``separation_of_duties``, or several
        approvals required (four eyes means two people who are not the requester)."""
        return self.separation_of_duties or self.required_approvals != 1

    suffix: str = "-channel"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelSpec(ComponentSpec):
    kind: str = "channel"
    suffix: str = "-channel"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyInterpreterSpec(ComponentSpec):
    decided_by: DecidedBy
    model: str | BaseChatModel | None = None
    prompt: str | None = None
    prompt_urls: tuple[str, ...] = ()
    kind: str = "reply-interpreter"
    suffix: str = "-reply-interpreter"


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicySpec(ComponentSpec):
    """An approval policy: ``decide(ask)`` before a question is sent (``bot.core.policy``).

    A composed policy (``all_of`` / ``first_of``) has ``parts`` and no ``decide`` of its own:
    the runtime asks each part (each made by the container with its own deps) and ``combine``
    says how their decisions make one."""

    parts: tuple[type, ...] = ()
    combine: Literal["all", "first"] | None = None
    kind: str = "policy"
    suffix: str = "-policy"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplicationSpec(ComponentSpec):
    workflows: tuple[type, ...]
    channels: tuple[type, ...]
    pause_record_retention: timedelta
    providers: tuple[ModelProvider, ...] = ()
    entry_workflow: type | None = None
    budget: Budget | None = None
    pii_policies: tuple[PiiPolicy, ...] = ()
    kind: str = "application"
    suffix: str = ""


def spec_of(cls: object) -> ComponentSpec | None:
    """The spec a decorator put on ``cls`` itself (not one inherited from a base class)."""
    if not isinstance(cls, type):
        return None
    spec = cls.__dict__.get(SPEC_ATTRIBUTE)
    return spec if isinstance(spec, ComponentSpec) else None
