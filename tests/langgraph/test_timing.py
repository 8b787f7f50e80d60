"""An attached graph's questions are timed like our own: reminded through the channel, and
expired — the HITL middleware's call rejected with why (or the run failed), a
``request_approval`` given a rejection — once, and the tree is not moved again afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from bot import (
    App,
    ExecutionResumeEvent,
    ExecutionStatus,
    NotPausedError,
    OnExpiry,
    PauseExpiredError,
    PauseResolution,
    PauseTiming,
)
from bot.testing import FakeClock, inspect_app
from bot.testing.llm import ScriptedChatModel
from tests.apps import sample_agent, sample_application
from tests.conftest import NO_SETTINGS
from tests.langgraph.conftest import ASK
from tests.langgraph.kit import (
    RefundCall,
    Refunds,
    one_refund,
    refund_agent,
    tool_calls,
    tool_messages,
)
from tests.langgraph.test_attached_agents import plain_graph
from tests.runtime.test_expiry import Sent, recording_role

HOUR = timedelta(hours=1)
SWEPT = timedelta(seconds=5)  # the sweep ticks every 3 s: whole hours from here end after one
REMINDED = PauseTiming(remind_after=HOUR, remind_every=2 * HOUR, expire_after=5 * HOUR)
FAILING = PauseTiming(expire_after=2 * HOUR, on_expiry=OnExpiry.FAIL)


def timed_application(name: str, timing: PauseTiming) -> tuple[Any, type]:
    """An application whose one role, with ``timing``, a recording channel implements."""

    TimedApproval, Recording = recording_role(
        name, approves=RefundCall, description="A manager approves refunds", timing=timing
    )

    idle = sample_agent(
        f"{name}-idle", tools=[], description="Not used", model=ScriptedChatModel(component="idle")
    )
    return sample_application(name, agent=idle, channels=[Recording]).application, TimedApproval


@pytest.fixture
def sent() -> Sent:
    return Sent()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


async def _open(application: Any, sent: Sent, clock: FakeClock) -> App:
    return await App.create(
        application,
        database_url="sqlite+aiosqlite:///:memory:",
        clock=clock,
        settings=NO_SETTINGS,
        services={Sent: sent},
    )


@pytest.fixture
async def reminded(sent: Sent, clock: FakeClock) -> AsyncIterator[tuple[App, type]]:
    application, role = timed_application("reminded", REMINDED)
    async with await _open(application, sent, clock) as app:
        yield app, role


async def _hours(clock: FakeClock, hours: int) -> None:
    for _ in range(hours):
        await clock.advance(HOUR)


async def test_reminded_then_expired_the_model_reads_that_nobody_approved_in_time(
    reminded: tuple[App, type], sent: Sent, clock: FakeClock
) -> None:
    app, role = reminded
    refunds, model = Refunds(), one_refund()
    agent = app.langgraph("refund-agent", refund_agent(model, refunds), role=role)
    paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    [ask] = sent.asks
    asked_at = clock.now()
    assert ask.expires_at == asked_at + 5 * HOUR
    await clock.advance(SWEPT)

    await _hours(clock, 1)
    assert [r.reminded for r in sent.reminders] == [0]
    await _hours(clock, 2)  # 3 h
    assert [r.reminded for r in sent.reminders] == [0, 1]
    assert sent.withdrawals == [] and len(model.calls) == 1
    await _hours(clock, 2)  # 5 h: expired, the graph resumed with a rejection

    [withdrawal] = sent.withdrawals
    assert withdrawal.resolution is PauseResolution.EXPIRED
    assert [r.pause_id for r in sent.reminders] == [ask.pause_id] * 2
    done = await app.get_result(paused.execution_id, tenant_id="acme")
    assert done.status is ExecutionStatus.COMPLETED
    assert refunds.runs == []
    [told] = [str(m.content) for m in tool_messages(model.calls[-1].messages)]
    expired_at = (asked_at + 5 * HOUR).isoformat()
    said = (
        f"nobody approved the call to refund in time (it expired at {expired_at}); it did not run"
    )
    assert told.endswith(f"with reason: {said}")  # the middleware's rejection, our reason

    with pytest.raises(NotPausedError):
        await app.resume(
            ask.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M"
        )
    calls = len(model.calls)
    await _hours(clock, 3)
    assert await app.close_due() == 0  # nothing left due: the tree is not moved again
    assert len(model.calls) == calls and len(sent.withdrawals) == 1 and len(sent.reminders) == 2


async def test_on_expiry_fail_fails_the_run_with_pause_expired(
    sent: Sent, clock: FakeClock
) -> None:
    application, role = timed_application("failing", FAILING)
    async with await _open(application, sent, clock) as app:
        refunds, model = Refunds(), one_refund()
        agent = app.langgraph("refund-agent", refund_agent(model, refunds), role=role)
        paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
        await clock.advance(2 * HOUR + SWEPT)

        done = await app.get_result(paused.execution_id, tenant_id="acme")
        row = await inspect_app(app).store.get(paused.execution_id)
        assert done.status is ExecutionStatus.FAILED
        assert row is not None and row.error is not None
        assert row.error.code == "pause.expired"
        assert row.error.message.startswith("nobody approved the call to refund in time")
        assert [w.resolution for w in sent.withdrawals] == [PauseResolution.EXPIRED]
        assert refunds.runs == [] and len(model.calls) == 1
        await _hours(clock, 2)
        assert await app.close_due() == 0 and len(sent.withdrawals) == 1


async def test_request_approval_gets_a_rejection_saying_nobody_approved_in_time(
    reminded: tuple[App, type], sent: Sent, clock: FakeClock
) -> None:
    app, role = reminded
    runs: list[str] = []
    agent = app.langgraph("plain-refund", plain_graph(runs), role=role)
    state = {"order_id": "9", "amount": 12.5}
    paused = await agent.ainvoke(state, thread_id="p1", tenant_id="acme", owner_id="U1")
    await clock.advance(5 * HOUR + SWEPT)

    done = await app.get_result(paused.execution_id, tenant_id="acme")
    assert done.status is ExecutionStatus.COMPLETED and runs == []
    assert done.output is not None
    assert done.output["outcome"].startswith("rejected: nobody approved the call to refund in time")
    assert [w.resolution for w in sent.withdrawals] == [PauseResolution.EXPIRED]


async def test_one_call_of_a_turn_answered_the_other_expired_resume_the_turn_once(
    reminded: tuple[App, type], sent: Sent, clock: FakeClock
) -> None:
    app, role = reminded
    refunds = Refunds()
    model = ScriptedChatModel(component="refund").then_return(
        tool_calls(
            ("refund", {"order_id": "7", "amount": 40}), ("refund", {"order_id": "8", "amount": 5})
        ),
        "Done.",
    )
    agent = app.langgraph("refund-agent", refund_agent(model, refunds), role=role)
    paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    first, second = sent.asks
    waiting = await app.resume(
        first.pause_id, decision={"approved": True}, tenant_id="acme", answered_by="M1"
    )
    assert waiting.status is ExecutionStatus.PAUSED and refunds.runs == []
    await clock.advance(5 * HOUR + SWEPT)

    done = await app.get_result(paused.execution_id, tenant_id="acme")
    assert done.status is ExecutionStatus.COMPLETED
    assert refunds.runs == [{"order_id": "7", "amount": 40}]  # the answered one ran, once
    assert [w.pause_id for w in sent.withdrawals] == [second.pause_id]
    assert len(model.calls) == 2


async def test_an_expired_call_is_answered_instead_where_reject_is_not_taken(
    reminded: tuple[App, type], sent: Sent, clock: FakeClock
) -> None:
    """The middleware takes approve and respond, not reject: on expiry the model reads that
    nobody approved in time as the call's answer, and the run goes on."""
    app, role = reminded
    refunds, model = Refunds(), one_refund()
    graph = refund_agent(model, refunds, allowed=("approve", "respond"))
    agent = app.langgraph("refund-agent", graph, role=role)
    paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    asked_at = clock.now()
    await clock.advance(5 * HOUR + SWEPT)

    done = await app.get_result(paused.execution_id, tenant_id="acme")
    assert done.status is ExecutionStatus.COMPLETED and refunds.runs == []
    [told] = [str(m.content) for m in tool_messages(model.calls[-1].messages)]
    expired_at = (asked_at + 5 * HOUR).isoformat()
    assert told == (
        f"nobody approved the call to refund in time (it expired at {expired_at}); it did not run"
    )


async def test_an_expired_call_fails_the_run_where_neither_reject_nor_respond_is_taken(
    reminded: tuple[App, type], sent: Sent, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """The middleware takes approve and edit only: nothing it takes says that nobody approved
    in time, so the run fails with ``pause.expired`` — in its record, in the log and in the
    move's event — and the middleware is never sent a decision it did not offer."""
    app, role = reminded
    moves: list[ExecutionResumeEvent] = []
    app.on_execution_resume(moves.append)
    refunds, model = Refunds(), one_refund()
    graph = refund_agent(model, refunds, allowed=("approve", "edit"))
    agent = app.langgraph("refund-agent", graph, role=role)
    paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
    await clock.advance(5 * HOUR + SWEPT)

    done = await app.get_result(paused.execution_id, tenant_id="acme")
    assert done.status is ExecutionStatus.FAILED
    assert refunds.runs == [] and len(model.calls) == 1
    row = await inspect_app(app).store.get(paused.execution_id)
    assert row is not None and row.error is not None
    assert row.error.code == "pause.expired"
    assert row.error.message.startswith("nobody approved the call to refund in time")
    assert "takes only approve, edit" in row.error.message
    assert done.error == row.error
    [failed] = moves
    assert isinstance(failed.error, PauseExpiredError) and failed.by_sweep
    assert failed.result is not None and failed.result.status is ExecutionStatus.FAILED
    [logged] = [r for r in caplog.records if r.getMessage().startswith("pause.expired")]
    assert paused.execution_id in logged.getMessage()
    assert [w.resolution for w in sent.withdrawals] == [PauseResolution.EXPIRED]
