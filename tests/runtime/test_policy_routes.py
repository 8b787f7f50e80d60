"""A policy's route (issue 28): ``PolicyOutcome.route(...)`` asks other approvers, in another
conversation, on a tighter timing — kept with the pause before anything is sent, so every
instance and sweep honours it: the channel is sent the route, the pause's view carries it, and
it expires on the routed timing (the FakeClock). Through ``app.execute`` (our own tool) and an
attached ``create_agent`` graph. On Slack: ``tests/slack/test_policy_routes.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from bot import (
    ExecutionStatus,
    PauseResolution,
    PauseRoute,
    PauseTiming,
    PolicyAsk,
    PolicyDecision,
    PolicyOutcome,
    policy,
)
from bot.core.routes import looser_times
from bot.testing import FakeClock
from tests.langgraph.kit import Refunds, refund_agent
from tests.runtime.test_policies import ASK, Desk, open_desk, refund_model

HOUR = timedelta(hours=1)
ROUTE = PauseRoute(
    approvers=("U0BOSS",), conversation="C0BOSS", timing=PauseTiming(expire_after=HOUR)
)


@policy(name="big-refund-route-policy", description="Big refunds go to the boss, within 1 h")
class BigRefundRoute:
    def decide(self, ask: PolicyAsk) -> PolicyDecision:
        if float(ask.arguments["amount"]) >= 500:
            return PolicyOutcome.route(
                approvers=["U0BOSS"],
                conversation="C0BOSS",
                timing=PauseTiming(expire_after=HOUR),
                reason="500 or more",
            )
        return PolicyOutcome.ask()


@pytest.fixture
async def routed(request: pytest.FixtureRequest) -> AsyncIterator[Desk]:
    name = request.node.name.replace("_", "-")[:36].strip("-")
    desk = await open_desk(name, clock=FakeClock(), role_policy=BigRefundRoute)
    async with desk.app:
        yield desk


async def test_a_routed_question_is_sent_and_kept_with_its_route(routed: Desk) -> None:
    paused = await routed.refund(700, asked=True)
    assert paused.status is ExecutionStatus.PAUSED
    [ask] = routed.told.asks
    assert ask.route == ROUTE
    assert ask.expires_at is not None  # the routed timing's expiry, told to the channel
    pause = await routed.app.find_pause(ask.pause_id, tenant_id="acme")
    assert pause is not None and pause.route == ROUTE
    assert pause.expires_at == ask.expires_at.isoformat()
    assert await routed.policy_samples() == {("big-refund-route-policy", "routed"): 1.0}
    # a small one is asked as configured
    await routed.refund(100, asked=True, order_id="8")
    assert routed.told.asks[-1].route is None


async def test_a_routed_question_expires_on_the_routed_timing(routed: Desk) -> None:
    clock = routed.app.clock
    assert isinstance(clock, FakeClock)
    paused = await routed.refund(700, asked=True)
    assert paused.status is ExecutionStatus.PAUSED
    routed.model.then_return("nobody approved it in time")
    await clock.advance(HOUR + timedelta(minutes=1))  # the role has no timing: only the route's
    result = await routed.app.get_result(paused.execution_id, tenant_id="acme", record=True)
    assert result.status is ExecutionStatus.COMPLETED
    assert routed.refunds.runs == []
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.resolution is PauseResolution.EXPIRED


async def test_an_attached_graph_s_question_is_routed_too(routed: Desk) -> None:
    refunds = Refunds()
    graph = routed.app.langgraph(
        "refund-graph", refund_agent(refund_model(700), refunds), role=routed.role
    )
    result = await graph.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    assert result.status is ExecutionStatus.PAUSED
    [ask] = routed.told.asks
    assert ask.route == ROUTE
    pause = await routed.app.find_pause(ask.pause_id, tenant_id="acme")
    assert pause is not None and pause.route == ROUTE
    assert refunds.runs == []


def test_a_route_only_tightens_the_timing() -> None:
    role = PauseTiming(remind_after=HOUR, expire_after=24 * HOUR)
    assert looser_times(PauseTiming(remind_after=HOUR, expire_after=2 * HOUR), role) == []
    assert looser_times(PauseTiming(expire_after=2 * HOUR), role) == ["remind_after"]
    assert looser_times(PauseTiming(remind_after=HOUR, expire_after=48 * HOUR), role) == [
        "expire_after"
    ]
    assert looser_times(PauseTiming(expire_after=48 * HOUR), None) == []


def test_a_route_reads_back_as_stored() -> None:
    assert PauseRoute.decode(ROUTE.encode()) == ROUTE
    assert PauseRoute.decode(None) is None
