"""A policy's route can ask for more approvers than the role (issue 29: "a role, or a policy's
routing, can require N approvals"): ``PolicyOutcome.route(required_approvals=2)`` makes the
calls that matter — a wire over a threshold — need two distinct approvers while the small ones
need one. Kept with the pause (so every instance counts as routed), only ever raising the
role's count, never the requester's, never decided by a grant. Through ``app.execute`` (our own
tool) and an attached ``create_agent`` graph; on Slack and the web:
``tests/slack/test_routed_approvals.py``, ``tests/web/test_routed_approvals.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot import (
    Answered,
    ApprovalCounted,
    ExecutionStatus,
    PauseAnswerer,
    PauseRoute,
    PolicyAsk,
    PolicyDecision,
    PolicyOutcome,
    Refused,
    SelfApprovalError,
    policy,
)
from bot.testing import FakeClock
from tests.langgraph.kit import Refunds, refund_agent
from tests.runtime.test_policies import ASK, Desk, open_desk, refund_model

THRESHOLD = 10_000


@policy(name="big-wire-four-eyes-policy", description="Wires of 10,000 or more need two approvers")
class BigWireFourEyes:
    def decide(self, ask: PolicyAsk) -> PolicyDecision:
        if float(ask.arguments["amount"]) >= THRESHOLD:
            return PolicyOutcome.route(required_approvals=2, reason="10,000 or more")
        return PolicyOutcome.ask()


def routing(count: object) -> type:
    """A policy that routes every question to ``count`` approvals (a wrong one included)."""

    @policy(name=f"count-{abs(hash(repr(count)))}-policy", description="Routes a count")
    class Counting:
        def decide(self, ask: PolicyAsk) -> PolicyDecision:
            return PolicyOutcome.route(required_approvals=count)  # type: ignore[arg-type]

    return Counting


@pytest.fixture
async def wires(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Desk]:
    name = request.node.name.replace("_", "-")[:36].strip("-")
    desk = await open_desk(
        name,
        clock=FakeClock(),
        role_policy=BigWireFourEyes,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'wires.db'}",
    )
    async with desk.app:
        yield desk


async def approve(desk: Desk, pause_id: str, by: str) -> object:
    return await desk.app.answer(pause_id, tenant_id="acme", by=by, decision={"approved": True})


async def test_a_wire_over_the_threshold_needs_two_approvers_a_small_one_one(
    wires: Desk,
) -> None:
    big = await wires.refund(25_000, asked=True)
    assert big.status is ExecutionStatus.PAUSED
    [ask] = wires.told.asks
    assert ask.route == PauseRoute(required_approvals=2)
    pause = await wires.app.find_pause(ask.pause_id, tenant_id="acme")
    assert pause is not None and pause.required_approvals == 2 and pause.still_needed == 2
    assert await wires.policy_samples() == {("big-wire-four-eyes-policy", "routed"): 1.0}

    first = await approve(wires, ask.pause_id, "U0ANN")
    assert isinstance(first, ApprovalCounted) and first.still_needed == 1
    assert wires.refunds.runs == []
    wires.model.then_return("sent")
    second = await approve(wires, ask.pause_id, "U0BOB")
    assert isinstance(second, Answered)
    assert wires.refunds.runs == [{"order_id": "7", "amount": 25_000.0}]
    assert second.result is not None
    result = await wires.app.get_result(second.result.execution_id, tenant_id="acme", record=True)
    assert result.record is not None
    [entry] = result.record.pauses
    assert [(a.by, a.counted) for a in entry.approvals] == [("U0ANN", True), ("U0BOB", True)]

    small = await wires.refund(500, asked=True, order_id="8")
    assert small.status is ExecutionStatus.PAUSED
    assert wires.told.asks[-1].route is None
    wires.model.then_return("done")
    one = await approve(wires, wires.told.asks[-1].pause_id, "U0ANN")
    assert isinstance(one, Answered)  # the role's one approval
    assert wires.refunds.runs[-1] == {"order_id": "8", "amount": 500.0}


async def test_the_requester_never_counts_on_a_routed_four_eyes_question(wires: Desk) -> None:
    await wires.refund(25_000, asked=True, owner_id="U0ANN")  # the role does not separate duties
    [ask] = wires.told.asks
    own = await approve(wires, ask.pause_id, "U0ANN")
    assert isinstance(own, Refused) and isinstance(own.error, SelfApprovalError)
    pause = await wires.app.find_pause(ask.pause_id, tenant_id="acme")
    assert pause is not None and pause.approvals == () and pause.still_needed == 2


async def test_the_routed_count_outlives_the_instance_that_routed_it(
    wires: Desk, tmp_path: Path
) -> None:
    await wires.refund(25_000, asked=True)
    [ask] = wires.told.asks
    assert isinstance(await approve(wires, ask.pause_id, "U0ANN"), ApprovalCounted)
    other = await open_desk(
        "the-routed-count-outlives-the-instance",
        role_policy=None,  # the other instance's role has no policy: the pause's route counts
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'wires.db'}",
    )
    async with other.app:
        pause = await other.app.find_pause(ask.pause_id, tenant_id="acme")
        assert pause is not None
        assert pause.route == PauseRoute(required_approvals=2)
        assert pause.required_approvals == 2 and pause.still_needed == 1


@pytest.mark.parametrize(
    ("role_count", "routed", "why"),
    [
        (2, 1, "from the role's (2)"),  # a route never lowers the role's count
        (1, 11, "to 10"),
        (1, 0, "from the role's (1)"),
        (1, True, "not True"),
        (1, 2.0, "not 2.0"),
    ],
    ids=["fewer-than-the-role", "too-many", "zero", "bool", "float"],
)
async def test_a_route_s_count_that_would_not_narrow_fails_and_the_role_s_stands(
    role_count: int, routed: object, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    desk = await open_desk(
        f"bad-count-{abs(hash(repr(routed)))}-{role_count}",
        role_policy=routing(routed),
        required_approvals=role_count,
    )
    async with desk.app:
        await desk.refund(25_000, asked=True)
        [ask] = desk.told.asks
        assert ask.route is None  # asked as configured
        pause = await desk.app.find_pause(ask.pause_id, tenant_id="acme")
        assert pause is not None and pause.required_approvals == role_count
        assert "policy.failed" in caplog.text and why in caplog.text
        [(_, outcome)] = (await desk.policy_samples()).keys()
        assert outcome == "failed"


async def test_a_thread_owner_s_question_cannot_be_routed_to_several_approvers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    desk = await open_desk(
        "thread-owner-routed-count",
        role_policy=routing(2),
        answered_by=PauseAnswerer.THREAD_OWNER,
    )
    async with desk.app:
        await desk.refund(25_000, asked=True)
        [ask] = desk.told.asks
        assert ask.route is None
        assert "thread's owner" in caplog.text
        desk.model.then_return("done")
        owner = await approve(desk, ask.pause_id, "U1")  # the owner's one answer, as configured
        assert isinstance(owner, Answered)


async def test_an_attached_graph_s_question_is_routed_to_two_approvers(wires: Desk) -> None:
    refunds = Refunds()
    graph = wires.app.langgraph(
        "wire-graph", refund_agent(refund_model(25_000), refunds), role=wires.role
    )
    result = await graph.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    assert result.status is ExecutionStatus.PAUSED
    [ask] = wires.told.asks
    assert ask.route == PauseRoute(required_approvals=2)
    first = await approve(wires, ask.pause_id, "U0ANN")
    assert isinstance(first, ApprovalCounted) and refunds.runs == []
    second = await approve(wires, ask.pause_id, "U0BOB")
    assert isinstance(second, Answered)
    assert len(refunds.runs) == 1


def test_a_route_s_count_reads_back_as_stored_and_an_older_route_has_none() -> None:
    route = PauseRoute(approvers=("U0BOSS",), required_approvals=3)
    assert PauseRoute.decode(route.encode()) == route
    older = '{"approvers":["U0BOSS"],"conversation":null,"timing":null}'
    assert PauseRoute.decode(older) == PauseRoute(approvers=("U0BOSS",))
    assert not PauseRoute(required_approvals=2).is_empty
