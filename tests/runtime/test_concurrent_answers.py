"""Spec: "Concurrent answers" — the fast webhook, and a lease held by a dead holder."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from bot import ChannelAsk, ChannelOutcome, ExecutionStatus, PauseResolution, PauseStatus
from bot.store.leases import LeaseClaim, SqlLeases
from bot.testing import inspect_app, mock_of
from tests.conftest import MakeOffice
from tests.office import RecordingRefundChannel
from tests.runtime.helpers import run, script_refund


async def test_a_reply_that_lands_while_send_returns_is_taken_at_once(
    make_office: MakeOffice,
) -> None:
    script_refund("done")
    office = await make_office()
    channel = mock_of(RecordingRefundChannel)
    webhooks: list[asyncio.Task[Any]] = []

    async def send(ask: ChannelAsk) -> Any:
        # the manager clicks before send has even returned
        webhook = asyncio.ensure_future(
            office.app.resume(
                ask.pause_id,
                decision={"approved": True},
                tenant_id="acme",
                answered_by="fast-manager",
            )
        )
        webhooks.append(webhook)
        store = inspect_app(office.app).store
        while True:  # until the webhook has answered
            record = await store.find("acme", ask.pause_id)
            assert record is not None
            if record.status is not PauseStatus.PENDING:
                break
            await asyncio.sleep(0.005)
        return ChannelOutcome.await_reply()

    channel.send.side_effect = send
    paused_events: list[Any] = []
    office.app.on_execution_pause(paused_events.append)
    result = await run(office)
    assert result.status is ExecutionStatus.COMPLETED  # the call did not pause at all
    assert paused_events == []
    assert [r[0] for r in office.ledger.runs] == ["refund"]
    answered = await webhooks[0]
    assert answered.status is ExecutionStatus.COMPLETED
    record = await office.app.get_result(result.execution_id, tenant_id="acme", record=True)
    assert record.record is not None
    [entry] = record.record.pauses
    assert entry.responder == "fast-manager"
    assert entry.resolution is PauseResolution.REPLIED


async def test_a_waiting_resume_takes_over_an_expired_lease(make_office: MakeOffice) -> None:
    script_refund("done")
    office = await make_office()
    paused = await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    leases = SqlLeases(office.app.database)
    # another instance holds the tree and dies: its lease stays until it expires
    assert await leases.try_take(
        LeaseClaim(paused.execution_id, "dead-instance", office.clock.now(), timedelta(seconds=60))
    )
    resuming = asyncio.ensure_future(
        office.app.resume(pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m")
    )
    store = inspect_app(office.app).store
    for _ in range(500):  # phase 1 (the answer recorded) ends soon, however loaded the machine
        record = await store.find("acme", pause_id)
        if record is not None and record.status is not PauseStatus.PENDING:
            break
        await asyncio.sleep(0.01)
    assert record is not None and record.status is PauseStatus.RESOLVED  # phase 1 is done
    await asyncio.sleep(0.05)
    assert not resuming.done()  # it waits for the holder
    await office.clock.advance(timedelta(seconds=61))
    result = await asyncio.wait_for(resuming, timeout=5)
    assert result.status is ExecutionStatus.COMPLETED
    assert [r[0] for r in office.ledger.runs] == ["refund"]
