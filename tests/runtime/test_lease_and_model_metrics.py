"""What the runtime counts beside the answers: a lease taken over from an instance that died,
apart from the waits for a live one; an agent's own model calls and their spend."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot import Answered, ExecutionStatus, ModelPrice
from bot.store.leases import LeaseClaim, SqlLeases
from bot.testing import call_tool, mock_llm
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund
from tests.runtime.reply_desk import KIMI, REFUND, OfficeAgent, RefundCardTool, open_desk
from tests.runtime.test_budgets import PricedProvider


async def test_a_sweep_taking_over_a_dead_instance_s_lease_is_a_takeover_not_a_wait(
    make_office: MakeOffice,
) -> None:
    script_refund("done")
    office = await make_office()
    paused = await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    dead = LeaseClaim(
        paused.execution_id, "dead-instance", office.clock.now(), timedelta(seconds=8)
    )
    assert await SqlLeases(office.app.database).try_take(dead)  # it holds the tree, then dies
    recorded = await office.app.answer(  # recorded only: the dead holder was to move it
        pause_id, tenant_id="acme", by="m", decision={"approved": True}, continue_run=False
    )
    assert isinstance(recorded, Answered)

    await office.clock.advance(timedelta(seconds=61))  # the recovery sweep takes the tree over

    done = await office.app.get_result(paused.execution_id, tenant_id="acme")
    assert done.status is ExecutionStatus.COMPLETED
    registry = office.app.metrics.registry
    assert registry.get_sample_value("countersign_lease_takeovers_total") == 1
    assert registry.get_sample_value("countersign_lease_waits_total") == 0
    assert registry.get_sample_value("countersign_swept_total", {"sweep": "recovery"}) == 1


async def test_a_resume_that_waits_for_a_live_lease_is_a_wait_then_a_takeover(
    make_office: MakeOffice,
) -> None:
    script_refund("done")
    office = await make_office()
    paused = await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    holder = LeaseClaim(paused.execution_id, "stalled", office.clock.now(), timedelta(seconds=60))
    assert await SqlLeases(office.app.database).try_take(holder)
    resuming = asyncio.ensure_future(
        office.app.resume(pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m")
    )
    registry = office.app.metrics.registry
    # the resume re-tries the lease every 20 ms of real time: wait until it found it held
    while not registry.get_sample_value("countersign_lease_waits_total"):  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    assert registry.get_sample_value("countersign_lease_takeovers_total") == 0

    await office.clock.advance(timedelta(seconds=30))  # renewed by nobody: not expired yet
    assert registry.get_sample_value("countersign_lease_takeovers_total") == 0
    await office.clock.advance(timedelta(seconds=31))
    result = await asyncio.wait_for(resuming, timeout=30)

    assert result.status is ExecutionStatus.COMPLETED
    assert registry.get_sample_value("countersign_lease_waits_total") == 1
    assert registry.get_sample_value("countersign_lease_takeovers_total") == 1


async def test_an_agent_s_model_calls_are_counted_with_their_spend() -> None:
    price = ModelPrice(input_per_million=2.0, output_per_million=10.0)
    mock_llm(OfficeAgent).with_usage(input_tokens=1000, output_tokens=100).then_return(
        call_tool(RefundCardTool, REFUND), "done"
    )
    async with open_desk(providers=[PricedProvider(prices={KIMI: price})]) as desk:
        await desk.execute()
        pause_id = desk.desk.pause_of("refund-card-tool")
        done = await desk.app.resume(
            pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
        registry = desk.app.metrics.registry

    assert done.status is ExecutionStatus.COMPLETED
    caller = {"caller": "agent:office-agent"}
    calls = "countersign_model_calls_total"
    assert registry.get_sample_value(calls, {**caller, "outcome": "ok"}) == 2
    assert registry.get_sample_value(calls, {**caller, "outcome": "failed"}) is None
    spent = registry.get_sample_value("countersign_model_spend_total", caller)
    assert spent == pytest.approx(0.006)  # twice 1000 in at 2/M and 100 out at 10/M
