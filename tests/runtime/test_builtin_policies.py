"""The built-in approval policies, each on its own (``decide`` called as the runtime calls it)
and composed through an App: refunds under 50 in office hours approve themselves, the rest is
asked; a time window read from the App's clock (``FakeClock``)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest

from bot import (
    ApproveAtOnce,
    AskPerson,
    ExecutionStatus,
    PolicyAsk,
    PolicyDecision,
    RejectAtOnce,
    SetupError,
    all_of,
    allow_requesters,
    allow_tenants,
    approve_below,
    first_of,
    policy,
    within_hours,
)
from bot.core.context import ExecutionContext, Tenant
from bot.testing import FakeClock
from tests.runtime.test_policies import open_desk

THURSDAY_9 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)  # FakeClock's start


def ask(
    arguments: dict[str, Any] | None = None,
    *,
    owner: str = "U0ANN",
    tenant: str = "acme",
    at: datetime = THURSDAY_9,
) -> PolicyAsk:
    return PolicyAsk(
        tool="refund-card-tool",
        arguments={"amount": 20} if arguments is None else arguments,
        call_id="call-1",
        role="refund-approval-channel",
        agent="refund-agent",
        context=ExecutionContext(
            tenant=Tenant(tenant_id=tenant),
            owner_id=owner,
            execution_id="e1",
            root_execution_id="e1",
            thread_id="t1",
        ),
        asked_at=at,
    )


def decide(policy_cls: type, question: PolicyAsk) -> PolicyDecision:
    decided: PolicyDecision = policy_cls().decide(question)
    return decided


def test_approve_below_approves_under_the_limit_and_asks_otherwise() -> None:
    small = approve_below("amount", 50, name="small-refund-policy")
    assert decide(small, ask({"amount": 49.99})) == ApproveAtOnce("under 50.00")
    for amount in (50, 51, float("nan"), float("inf"), "10", True, None):
        assert decide(small, ask({"amount": amount})) == AskPerson(), amount
    assert decide(small, ask({})) == AskPerson()
    at_most = approve_below("amount", 50, name="at-most-policy", inclusive=True)
    assert decide(at_most, ask({"amount": 50})) == ApproveAtOnce("at most 50.00")
    with pytest.raises(SetupError):
        approve_below("amount", float("nan"), name="broken-policy")


def test_allow_lists_approve_the_listed_requesters_and_tenants_only() -> None:
    anns = allow_requesters(["U0ANN"], name="ann-policy")
    assert decide(anns, ask(owner="U0ANN")) == ApproveAtOnce("requested by U0ANN")
    assert decide(anns, ask(owner="U0BOB")) == AskPerson()
    acme = allow_tenants(["acme"], name="acme-policy")
    assert decide(acme, ask(tenant="acme")) == ApproveAtOnce("tenant acme")
    assert decide(acme, ask(tenant="globex")) == AskPerson()
    with pytest.raises(SetupError):
        allow_requesters("U0ANN", name="one-string-policy")
    with pytest.raises(SetupError):
        allow_tenants([], name="nobody-policy")


def test_within_hours_reads_the_asked_at_time_in_its_zone_and_days() -> None:
    office = within_hours(
        time(9), time(17), tz="Europe/Berlin", weekdays=range(5), name="office-policy"
    )
    # 09:00 UTC is 10:00 in Berlin on a Thursday
    assert decide(office, ask()) == ApproveAtOnce("asked within 09:00-17:00 Europe/Berlin")
    assert decide(office, ask(at=THURSDAY_9 + timedelta(hours=7))) == AskPerson()  # 17:00
    assert decide(office, ask(at=THURSDAY_9 - timedelta(hours=1))) == ApproveAtOnce(
        "asked within 09:00-17:00 Europe/Berlin"
    )  # 09:00 in Berlin
    assert decide(office, ask(at=THURSDAY_9 + timedelta(days=2))) == AskPerson()  # Saturday
    night = within_hours(time(22), time(6), weekdays=[3], name="night-policy")
    assert decide(night, ask(at=THURSDAY_9 + timedelta(hours=14))) != AskPerson()  # Thu 23:00
    assert decide(night, ask(at=THURSDAY_9 + timedelta(hours=19))) != AskPerson()  # Fri 04:00
    assert decide(night, ask(at=THURSDAY_9 + timedelta(days=1, hours=14))) == AskPerson()  # Fri
    with pytest.raises(SetupError):
        within_hours(time(9), time(17), tz="Mars/Olympus", name="mars-policy")


@policy(name="never-policy", description="Rejects everything")
class Never:
    def decide(self, ask: PolicyAsk) -> PolicyDecision:
        return RejectAtOnce("never")


async def test_composed_policies_decide_through_the_app_on_its_clock() -> None:
    clock = FakeClock()
    refunds = all_of(
        approve_below("amount", 50, name="under-fifty-policy"),
        within_hours(time(9), time(17), name="office-hours-policy"),
        name="refund-policy",
    )
    desk = await open_desk("composed", clock=clock, role_policy=refunds)
    async with desk.app:
        approved = await desk.refund(20)
        assert approved.status is ExecutionStatus.COMPLETED
        assert approved.record is not None
        [entry] = approved.record.pauses
        assert entry.policy == "refund-policy"
        assert entry.decision is not None
        assert entry.decision["reason"] == "under 50.00; asked within 09:00-17:00 UTC"
        assert (await desk.refund(80, asked=True)).status is ExecutionStatus.PAUSED  # over: asked
        await clock.advance(timedelta(hours=9))  # 18:00: out of hours
        assert (await desk.refund(20, asked=True)).status is ExecutionStatus.PAUSED
        assert len(desk.told.asks) == 2 and len(desk.refunds.runs) == 1
        assert await desk.policy_samples() == {
            ("refund-policy", "approved"): 1.0,
            ("refund-policy", "asked"): 2.0,
        }


def test_all_of_rejects_if_a_part_rejects_and_first_of_takes_the_first_decision() -> None:
    from bot.runtime.policies import combined

    approve, reject, person = ApproveAtOnce("a"), RejectAtOnce("r"), AskPerson()
    assert combined("all", [approve, approve]) == ApproveAtOnce("a; a")
    assert combined("all", [approve, person]) == AskPerson()
    assert combined("all", [person, reject]) == reject
    assert combined("first", [person, reject, approve]) == reject
    assert combined("first", [person]) == AskPerson()
    with pytest.raises(SetupError):
        first_of(name="empty-policy")
    assert Never().decide(ask()) == reject.__class__("never")
