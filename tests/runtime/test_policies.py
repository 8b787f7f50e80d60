"""Approval policies (issue 28): ``policy=`` on a role or a tool decides before a question is
sent — ask a person, approve or reject at once — recorded like any decision (DECIDED, the
policy as responder with its reason), counted in /metrics, told to the channel; a policy that
fails asks. Each outcome through ``app.execute`` (our own tool) and an attached ``create_agent``
graph with ``HumanInTheLoopMiddleware``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from bot import (
    App,
    AssemblyError,
    ChannelAsk,
    ChannelAutoDecision,
    ChannelOf,
    ChannelOutcome,
    ExecutionContext,
    ExecutionResult,
    ExecutionStatus,
    GrantScopeKind,
    PauseAnswerer,
    PauseAuditEntry,
    PauseResolution,
    PolicyAsk,
    PolicyDecision,
    PolicyOutcome,
    WorkflowStartText,
    channel,
    channel_role,
    policy,
    tool,
)
from bot.core.channel import AwaitReply
from bot.testing import FakeClock, ScriptedChatModel, call_tool, mock_llm
from tests.apps import SampleApplication, sample_agent, sample_application
from tests.conftest import NO_SETTINGS
from tests.langgraph.kit import Refunds, refund_agent, tool_calls

ASK = {"messages": [{"role": "user", "content": "refund order 7"}]}


class RefundInput(BaseModel):
    order_id: str
    amount: float
    email: str = "customer@example.com"


@dataclass
class Limits:
    """A service the policy reads (from the container): refunds under ``auto`` approve
    themselves, over ``refuse`` are refused, the rest are asked."""

    auto: float = 50.0
    refuse: float = 1000.0
    seen: list[tuple[str, str, str]] = field(default_factory=list)
    broken: bool = False


@policy(
    name="refund-policy",
    description="Small refunds approve themselves",
    deps=[Limits, ExecutionContext],
)
class RefundPolicy:
    def __init__(self, limits: Limits, context: ExecutionContext) -> None:
        self.limits = limits
        self.context = context

    def decide(self, ask: PolicyAsk) -> PolicyDecision:
        self.limits.seen.append((ask.tool, ask.tenant_id, self.context.owner_id))
        if self.limits.broken:
            raise ConnectionError("the limits service is unreachable")
        amount = float(ask.arguments["amount"])
        if amount < self.limits.auto:
            return PolicyOutcome.approve(f"under {self.limits.auto:.2f}")
        if amount > self.limits.refuse:
            return PolicyOutcome.reject(f"over {self.limits.refuse:.2f}: never refunded")
        return PolicyOutcome.ask()


@policy(name="async-refund-policy", description="The same, async", deps=[Limits])
class AsyncRefundPolicy:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    async def decide(self, ask: PolicyAsk) -> PolicyDecision:
        return RefundPolicy(self.limits, ask.context).decide(ask)


@dataclass
class Told:
    asks: list[ChannelAsk] = field(default_factory=list)
    decided: list[ChannelAutoDecision] = field(default_factory=list)


def refund_role(
    name: str,
    *,
    role_policy: type | None,
    grants: Sequence[GrantScopeKind] = (),
    separation_of_duties: bool = False,
    required_approvals: int = 1,
    answered_by: PauseAnswerer = PauseAnswerer.CHANNEL,
) -> tuple[type, type]:
    @channel_role(
        name=f"{name}-approval-channel",
        description="A manager approves refunds",
        approves=RefundInput,
        answered_by=answered_by,
        policy=role_policy,
        grants=grants,
        separation_of_duties=separation_of_duties,
        required_approvals=required_approvals,
    )
    class RefundApproval(ChannelOf): ...

    @channel(name=f"{name}-told-channel", description="Records", deps=[Told])
    class Recording(RefundApproval):
        def __init__(self, told: Told) -> None:
            self.told = told

        async def send(self, ask: ChannelAsk) -> AwaitReply:
            self.told.asks.append(ask)
            return ChannelOutcome.await_reply()

        async def auto_decided(self, decision: ChannelAutoDecision) -> None:
            self.told.decided.append(decision)

    return RefundApproval, Recording


def refund_application(
    name: str,
    *,
    role_policy: type | None = RefundPolicy,
    tool_policy: type | None = None,
    grants: Sequence[GrantScopeKind] = (),
    separation_of_duties: bool = False,
    required_approvals: int = 1,
    answered_by: PauseAnswerer = PauseAnswerer.CHANNEL,
) -> tuple[SampleApplication, type, type]:
    role, recording = refund_role(
        name,
        role_policy=role_policy,
        grants=grants,
        separation_of_duties=separation_of_duties,
        required_approvals=required_approvals,
        answered_by=answered_by,
    )

    @tool(
        name=f"{name}-refund-tool",
        description="Refunds a card",
        input=RefundInput,
        channel=role,
        policy=tool_policy,
        deps=[Refunds],
    )
    class RefundTool:
        def __init__(self, refunds: Refunds) -> None:
            self.refunds = refunds

        def run(self, input: RefundInput) -> str:
            self.refunds.runs.append({"order_id": input.order_id, "amount": input.amount})
            return f"refunded {input.amount:.2f}"

    agent = sample_agent(name, tools=[RefundTool], description="Refunds")
    return sample_application(name, agent=agent, channels=[recording]), RefundTool, role


@dataclass
class Desk:
    app: App
    sample: SampleApplication
    tool: type
    role: type
    limits: Limits
    told: Told
    refunds: Refunds
    model: ScriptedChatModel

    async def refund(
        self,
        amount: float,
        *,
        owner_id: str = "U1",
        asked: bool = False,
        tenant_id: str = "acme",
        order_id: str = "7",
    ) -> ExecutionResult:
        """Run a refund of ``amount``; ``asked``: it is expected to wait for a person (the
        model's final answer is scripted only for a run that goes on at once)."""
        call = call_tool(self.tool, {"order_id": order_id, "amount": amount})
        if asked:
            self.model.then_return(call)
        else:
            self.model.then_return(call, "done")
        return await self.app.execute(
            self.sample.workflow,
            WorkflowStartText(text="refund order 7"),
            tenant_id=tenant_id,
            owner_id=owner_id,
            record=True,
        )

    async def policy_samples(self) -> dict[tuple[str, str], float]:
        """``countersign_policy_decisions_total`` as /metrics serves it, by (policy, outcome)."""
        text = (await self.app.metrics.exposition()).decode()
        samples = {}
        for line in text.splitlines():
            if line.startswith("countersign_policy_decisions_total{"):
                labels, value = line.removeprefix("countersign_policy_decisions_total").split(" ")
                pairs = dict(p.split("=") for p in labels.strip("{}").split(","))
                samples[(pairs["policy"].strip('"'), pairs["outcome"].strip('"'))] = float(value)
        return samples


async def open_desk(
    name: str,
    *,
    clock: FakeClock | None = None,
    database_url: str = "sqlite+aiosqlite:///:memory:",
    **kwargs: Any,
) -> Desk:
    sample, tool_cls, role = refund_application(name, **kwargs)
    limits, told, refunds = Limits(), Told(), Refunds()
    model = mock_llm(sample.agent)  # before the App: a scripted agent needs no provider
    app = await App.create(
        sample.application,
        database_url=database_url,
        settings=NO_SETTINGS,
        clock=clock,
        services={Limits: limits, Told: told, Refunds: refunds},
    )
    return Desk(
        app=app,
        sample=sample,
        tool=tool_cls,
        role=role,
        limits=limits,
        told=told,
        refunds=refunds,
        model=model,
    )


@pytest.fixture
async def desk(request: pytest.FixtureRequest) -> AsyncIterator[Desk]:
    desk = await open_desk(request.node.name.replace("_", "-")[:40].strip("-"))
    async with desk.app:
        yield desk


def only_entry(result: ExecutionResult) -> PauseAuditEntry:
    assert result.record is not None
    [entry] = result.record.pauses
    return entry


async def test_a_small_refund_approves_itself_recorded_as_the_policy_s_decision(
    desk: Desk,
) -> None:
    result = await desk.refund(20)
    assert result.status is ExecutionStatus.COMPLETED
    assert desk.refunds.runs == [{"order_id": "7", "amount": 20.0}]  # ran once
    assert desk.told.asks == []  # nobody was asked
    entry = only_entry(result)
    assert entry.resolution is PauseResolution.DECIDED
    assert entry.responder == "policy:refund-policy"
    assert entry.policy == "refund-policy"
    assert entry.decision == {"approved": True, "reason": "under 50.00", "override_arguments": None}
    assert entry.ran_with == {"order_id": "7", "amount": 20.0, "email": "customer@example.com"}
    [told] = desk.told.decided
    assert told.text == "approved automatically by refund-policy: under 50.00"
    tool_name = "test-a-small-refund-approves-itself-reco-refund-tool"
    assert (told.owner_id, told.tenant_id, told.value.tool) == ("U1", "acme", tool_name)
    assert desk.limits.seen == [(told.value.tool, "acme", "U1")]  # in the pause's frame, once
    assert await desk.policy_samples() == {("refund-policy", "approved"): 1.0}


async def test_a_huge_refund_is_rejected_with_the_policy_s_reason(desk: Desk) -> None:
    result = await desk.refund(5000)
    assert result.status is ExecutionStatus.COMPLETED
    assert desk.refunds.runs == [] and desk.told.asks == []
    entry = only_entry(result)
    assert (entry.resolution, entry.policy, entry.ran_with) == (
        PauseResolution.DECIDED,
        "refund-policy",
        None,
    )
    assert entry.decision is not None and entry.decision["reason"] == "over 1000.00: never refunded"
    assert (
        desk.told.decided[0].text
        == "rejected automatically by refund-policy: over 1000.00: never refunded"
    )
    assert await desk.policy_samples() == {("refund-policy", "rejected"): 1.0}


async def test_between_the_bounds_a_person_is_asked_as_without_a_policy(desk: Desk) -> None:
    paused = await desk.refund(300)
    assert paused.status is ExecutionStatus.PAUSED
    [ask] = desk.told.asks
    assert desk.told.decided == [] and desk.refunds.runs == []
    done = await desk.app.resume(
        ask.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M1", record=True
    )
    assert done.status is ExecutionStatus.COMPLETED
    entry = only_entry(done)
    assert (entry.resolution, entry.responder, entry.policy) == (
        PauseResolution.REPLIED,
        "M1",
        None,
    )
    assert len(desk.limits.seen) == 1  # the resumed pass found the question asked: not again
    assert await desk.policy_samples() == {("refund-policy", "asked"): 1.0}


async def test_a_policy_that_raises_asks_and_logs_policy_failed(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    desk.limits.broken = True
    with caplog.at_level(logging.WARNING, logger="countersign"):
        paused = await desk.refund(20)  # under the bound, but the policy cannot say so
    assert paused.status is ExecutionStatus.PAUSED
    assert len(desk.told.asks) == 1 and desk.refunds.runs == []
    [failed] = [r for r in caplog.records if r.getMessage().startswith("policy.failed")]
    assert "ConnectionError: the limits service is unreachable" in failed.getMessage()
    assert failed.__dict__["policy"] == "refund-policy"
    assert await desk.policy_samples() == {("refund-policy", "failed"): 1.0}


async def test_a_policy_that_returns_no_outcome_or_no_reason_asks() -> None:
    for index, answer in enumerate([True, PolicyOutcome.approve("  ")]):

        @policy(name=f"sloppy-{index}-policy", description="Returns what it should not")
        class Sloppy:
            def decide(self, ask: PolicyAsk) -> Any:
                return answer  # noqa: B023 (used before the loop moves on)

        desk = await open_desk(f"sloppy-{index}", role_policy=Sloppy)
        async with desk.app:
            assert (await desk.refund(20)).status is ExecutionStatus.PAUSED
            assert desk.refunds.runs == [] and len(desk.told.asks) == 1
            assert await desk.policy_samples() == {(f"sloppy-{index}-policy", "failed"): 1.0}


async def test_a_tool_s_own_policy_takes_the_place_of_its_role_s() -> None:
    desk = await open_desk("own", role_policy=None, tool_policy=AsyncRefundPolicy)
    async with desk.app:
        result = await desk.refund(10)
        assert result.status is ExecutionStatus.COMPLETED
        assert only_entry(result).policy == "async-refund-policy"


async def test_assembly_checks_a_policy_s_name_kind_and_method() -> None:
    @policy(name="refund-rules", description="No suffix")
    class Unsuffixed:
        def decide(self, ask: PolicyAsk) -> PolicyDecision:
            return PolicyOutcome.ask()

    class Undecorated:
        def decide(self, ask: PolicyAsk) -> PolicyDecision:
            return PolicyOutcome.ask()

    @policy(name="mute-policy", description="No decide")
    class Mute: ...

    for policy_cls, rule in (
        (Unsuffixed, "name.kind-suffix"),
        (Undecorated, "policy.not-a-policy"),
        (Mute, "policy.no-decide-method"),
    ):
        sample, _, _ = refund_application(f"bad-{rule.replace('.', '-')}", role_policy=policy_cls)
        with pytest.raises(AssemblyError) as raised:
            await App.create(
                sample.application,
                database_url="sqlite+aiosqlite:///:memory:",
                settings=NO_SETTINGS,
            )
        assert f"[{rule}]" in str(raised.value)


# --- an attached create_agent graph (HumanInTheLoopMiddleware) under the same role ---------


def refund_model(amount: float) -> ScriptedChatModel:
    return ScriptedChatModel(component="refund").then_return(
        tool_calls(("refund", {"order_id": "7", "amount": amount})), "Done."
    )


async def test_an_attached_graph_s_small_refund_approves_itself(desk: Desk) -> None:
    refunds = Refunds()
    graph = desk.app.langgraph(
        "refund-graph", refund_agent(refund_model(20), refunds), role=desk.role
    )
    result = await graph.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1", record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert refunds.runs == [{"order_id": "7", "amount": 20}]
    assert desk.told.asks == []
    entry = only_entry(result)
    assert (entry.resolution, entry.responder, entry.policy) == (
        PauseResolution.DECIDED,
        "policy:refund-policy",
        "refund-policy",
    )
    assert entry.decision is not None and entry.decision["reason"] == "under 50.00"
    assert desk.told.decided[0].text == "approved automatically by refund-policy: under 50.00"
    assert await desk.policy_samples() == {("refund-policy", "approved"): 1.0}


async def test_an_attached_graph_s_huge_refund_is_rejected_and_the_model_reads_why(
    desk: Desk,
) -> None:
    refunds, model = Refunds(), refund_model(5000)
    graph = desk.app.langgraph("refund-graph", refund_agent(model, refunds), role=desk.role)
    result = await graph.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1", record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert refunds.runs == []
    said = [str(m.content) for m in model.calls[-1].messages if m.type == "tool"]
    assert len(said) == 1 and "over 1000.00: never refunded" in said[0]
    assert only_entry(result).policy == "refund-policy"
    assert await desk.policy_samples() == {("refund-policy", "rejected"): 1.0}


async def test_an_attached_graph_asks_a_person_between_the_bounds_and_when_the_policy_fails(
    desk: Desk,
) -> None:
    refunds = Refunds()
    graph = desk.app.langgraph(
        "refund-graph", refund_agent(refund_model(300), refunds), role=desk.role
    )
    paused = await graph.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    assert paused.status is ExecutionStatus.PAUSED and len(desk.told.asks) == 1
    desk.limits.broken = True
    failing = desk.app.langgraph(
        "refund-graph-2", refund_agent(refund_model(20), refunds), role=desk.role
    )
    paused = await failing.ainvoke(ASK, thread_id="t2", tenant_id="acme", owner_id="U1")
    assert paused.status is ExecutionStatus.PAUSED and len(desk.told.asks) == 2
    assert refunds.runs == []
    assert await desk.policy_samples() == {
        ("refund-policy", "asked"): 1.0,
        ("refund-policy", "failed"): 1.0,
    }
