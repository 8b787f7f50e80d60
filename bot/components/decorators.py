"""The decorators of the public API. Each records a frozen spec on the class and returns it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from bot.components.specs import (
    SPEC_ATTRIBUTE,
    AgentSpec,
    ApplicationSpec,
    ChannelRoleSpec,
    ChannelSpec,
    ComponentSpec,
    PolicySpec,
    ReplyInterpreterSpec,
    ToolSpec,
    WorkflowFinishSpec,
    WorkflowSpec,
    WorkflowStartSpec,
)
from bot.core.dtos import RejectReason
from bot.core.enums import DecidedBy, PauseAnswerer
from bot.core.grants import GrantScopeKind
from bot.core.timing import PauseTiming

if TYPE_CHECKING:  # type-only: `python -m bot --help` does not wait for LangChain
    from langchain_core.language_models import BaseChatModel

    from bot.components.flow import FlowBuilder
    from bot.core.budget import Budget
    from bot.core.pii import PiiPolicy
    from bot.core.providers import ModelProvider

C = TypeVar("C", bound=type)

DEFAULT_TOOL_TIMEOUT = timedelta(seconds=30)
DEFAULT_PAUSE_RECORD_RETENTION = timedelta(hours=24)


def _attach(spec_factory: Callable[[type], ComponentSpec]) -> Callable[[C], C]:
    def decorate(cls: C) -> C:
        setattr(cls, SPEC_ATTRIBUTE, spec_factory(cls))
        return cls

    return decorate


def tool(
    *,
    name: str,
    description: str,
    input: type[BaseModel],
    output: type[BaseModel] | None = None,
    channel: type | None = None,
    deps: Sequence[type] = (),
    timeout: timedelta = DEFAULT_TOOL_TIMEOUT,
    timing: PauseTiming | None = None,
    question: str | None = None,
    policy: type | None = None,
) -> Callable[[C], C]:
    """A tool an agent may call; with ``channel`` every call asks that channel first.
    ``timing`` overrides the role's ``PauseTiming`` for this tool's questions; ``policy`` (a
    ``@policy`` class) decides before each question is sent, in place of its role's.
    ``question``: how its questions read, a template of its arguments written as a person reads
    them (``"Refund {amount} to the card of order {order_id}?"``); without it, the role's, else
    the description."""
    return _attach(
        lambda cls: ToolSpec(
            name=name,
            description=description,
            cls=cls,
            deps=tuple(deps),
            input=input,
            output=output,
            channel=channel,
            timeout=timeout,
            timing=timing,
            question=question,
            policy=policy,
        )
    )


def agent(
    *,
    name: str,
    description: str,
    prompt: str,
    model: str | BaseChatModel,
    tools: Sequence[type] = (),
    max_tool_loop_iterations: int = 25,
) -> Callable[[C], C]:
    """An agent: a chat model in a tool loop. ``model`` is a model name or a chat model."""
    return _attach(
        lambda cls: AgentSpec(
            name=name,
            description=description,
            cls=cls,
            prompt=prompt,
            model=model,
            tools=tuple(tools),
            max_tool_loop_iterations=max_tool_loop_iterations,
        )
    )


def workflow_start(*, name: str, description: str, input: type[BaseModel]) -> Callable[[C], C]:
    return _attach(
        lambda cls: WorkflowStartSpec(name=name, description=description, cls=cls, input=input)
    )


def workflow_finish(*, name: str, description: str, output: type[BaseModel]) -> Callable[[C], C]:
    return _attach(
        lambda cls: WorkflowFinishSpec(name=name, description=description, cls=cls, output=output)
    )


def workflow(
    *,
    name: str,
    version: str,
    flow: Sequence[FlowBuilder],
    description: str = "",
    budget: Budget | None = None,
    pii_policies: Sequence[PiiPolicy] = (),
) -> Callable[[C], C]:
    """A workflow: its flow, and optionally a budget and PII policies for its model calls."""
    return _attach(
        lambda cls: WorkflowSpec(
            name=name,
            description=description,
            cls=cls,
            version=version,
            flows=tuple(flow),
            budget=budget,
            pii_policies=tuple(pii_policies),
        )
    )


def channel_role(
    *,
    name: str,
    description: str,
    approves: type[BaseModel],
    answered_by: PauseAnswerer,
    reply_interpreter: type | None = None,
    separation_of_duties: bool = False,
    timing: PauseTiming | None = None,
    reject_reason: RejectReason = "optional",
    question: str | None = None,
    policy: type | None = None,
    grants: Sequence[GrantScopeKind] = (),
    required_approvals: int = 1,
) -> Callable[[C], C]:
    """A role: what is asked (``approves``) and who may answer (required, no default).

    ``question``: how its questions read, a template of the arguments (``"Refund {amount} to
    order {order_id}?"``) used where the tool has none of its own.

    ``timing``: when its questions expire (``PauseResolution.EXPIRED``: never a rejection;
    ``on_expiry`` says what the waiting step gets), remind and escalate.

    ``separation_of_duties=True``: the execution's owner (who asked for the work) may not
    answer its pauses, as approval policies often require; their answer is refused with
    ``SelfApprovalError`` (``pause.self-approval``) and the pause keeps waiting. A role answered
    by the thread's owner cannot have it (assembly refuses: nobody could answer).

    ``reject_reason="required"``: a rejection must say why, whichever way it comes (a Reject
    form or modal, a thread reply, ``App.answer`` / ``App.resume``, a channel's
    ``ChannelOutcome.decided``); without its reason it is refused and the question keeps
    waiting. ``"optional"`` (the default): a reason may be given. Anything else is
    ``[channel-role.reject-reason]`` at assembly.

    ``policy``: a ``@policy`` class consulted before each question is sent (a tool's own
    ``policy=`` takes its place): it may ask a person, approve or reject at once.

    ``grants``: the scopes of standing grants its approvers may give (``"thread"``,
    ``"requester"``, ``"agent"``; ``App.grant``); none by default: every question is asked.
    Anything else is ``[channel-role.grants]`` at assembly.

    ``required_approvals=2`` (four eyes): a question waits until that many distinct approvers
    approved the same arguments; one rejection rejects, an edit replaces the proposal (the
    approvals so far are void: the others approve what they are shown), the requester never
    counts (as with ``separation_of_duties``) and a second approval by the same person is
    ``AlreadyApprovedError`` (``pause.already-approved``). Only for a CHANNEL role, a whole
    number from 1 (the default); else ``[channel-role.required-approvals]`` at assembly.
    """
    return _attach(
        lambda cls: ChannelRoleSpec(
            name=name,
            description=description,
            cls=cls,
            approves=approves,
            answered_by=answered_by,
            reply_interpreter=reply_interpreter,
            separation_of_duties=separation_of_duties,
            timing=timing,
            reject_reason=reject_reason,
            question=question,
            policy=policy,
            grants=tuple(grants),
            required_approvals=required_approvals,
        )
    )


def channel(*, name: str, description: str, deps: Sequence[type] = ()) -> Callable[[C], C]:
    """A concrete channel: implements a role (or is used on a tool as is)."""
    return _attach(
        lambda cls: ChannelSpec(name=name, description=description, cls=cls, deps=tuple(deps))
    )


def policy(*, name: str, description: str, deps: Sequence[type] = ()) -> Callable[[C], C]:
    """An approval policy: ``decide(self, ask: PolicyAsk) -> PolicyDecision`` (sync or async)
    runs before a question is sent; its deps come from the container (``ExecutionContext``:
    the pause's frame). Named by ``policy=`` on a role or a tool; its name ends in
    ``-policy``."""
    return _attach(
        lambda cls: PolicySpec(name=name, description=description, cls=cls, deps=tuple(deps))
    )


def reply_interpreter(
    *,
    name: str,
    description: str,
    decided_by: DecidedBy,
    model: str | BaseChatModel | None = None,
    prompt: str | None = None,
    prompt_urls: Sequence[str] = (),
    deps: Sequence[type] = (),
) -> Callable[[C], C]:
    return _attach(
        lambda cls: ReplyInterpreterSpec(
            name=name,
            description=description,
            cls=cls,
            deps=tuple(deps),
            decided_by=decided_by,
            model=model,
            prompt=prompt,
            prompt_urls=tuple(prompt_urls),
        )
    )


def application(
    *,
    name: str,
    workflows: Sequence[type] = (),
    channels: Sequence[type] = (),
    pause_record_retention: timedelta = DEFAULT_PAUSE_RECORD_RETENTION,
    providers: Sequence[ModelProvider] = (),
    entry_workflow: type | None = None,
    description: str = "",
    budget: Budget | None = None,
    pii_policies: Sequence[PiiPolicy] = (),
) -> Callable[[C], C]:
    """The application: its workflows, the channel implementations, and its model providers.

    An application whose work is done by attached LangGraph graphs (``App.langgraph``) names
    no workflow: its channels (the implementations of the roles its graphs ask) are enough."""
    return _attach(
        lambda cls: ApplicationSpec(
            name=name,
            description=description,
            cls=cls,
            workflows=tuple(workflows),
            channels=tuple(channels),
            pause_record_retention=pause_record_retention,
            providers=tuple(providers),
            entry_workflow=entry_workflow,
            budget=budget,
            pii_policies=tuple(pii_policies),
        )
    )
