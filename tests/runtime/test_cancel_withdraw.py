"""Spec: "Taking a question back" on the cancel path, and app.cancel."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest

from bot import (
    ChannelWithdrawal,
    ExecutionStatus,
    NotPausedError,
    PauseResolution,
    UnknownThreadError,
)
from bot.store.closings import Cancelled
from bot.testing import inspect_app, mock_of
from tests.conftest import MakeOffice
from tests.office import RecordingRefundChannel
from tests.runtime.helpers import run, script_refund, script_refund_and_expense


async def test_cancel_withdraws_each_sent_pause_once(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    results = await office.app.cancel(first.thread_id, tenant_id="acme")
    assert [r.status for r in results] == [ExecutionStatus.CANCELLED]
    assert results[0].pending == []
    assert sorted(w.value.tool for w in office.inbox.withdrawals) == [
        "book-expense-tool",
        "refund-card-tool",
    ]
    assert {w.resolution for w in office.inbox.withdrawals} == {PauseResolution.CANCELLED}
    sent = {a.pause_id for a in office.inbox.asks}
    assert {w.pause_id for w in office.inbox.withdrawals} == sent
    # a late answer to a withdrawn question
    refund_id = office.inbox.last("refund-card-tool").pause_id
    with pytest.raises(NotPausedError) as error:
        await office.app.resume(
            refund_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert "no longer needed" in str(error.value)
    # cancelling again tells nobody again
    await office.app.cancel(first.thread_id, tenant_id="acme")
    assert len(office.inbox.withdrawals) == 2
    assert office.ledger.runs == []


async def test_concurrent_cancels_tell_the_channel_once(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    first = await run(office)
    await asyncio.gather(*(office.app.cancel(first.thread_id, tenant_id="acme") for _ in range(5)))
    assert len(office.inbox.withdrawals) == 1


async def test_cancel_of_an_unknown_thread(make_office: MakeOffice) -> None:
    office = await make_office()
    with pytest.raises(UnknownThreadError):
        await office.app.cancel("nope", tenant_id="acme")


async def test_cancel_of_another_tenants_thread_is_unknown(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    first = await run(office, tenant_id="acme")
    with pytest.raises(UnknownThreadError):
        await office.app.cancel(first.thread_id, tenant_id="evil")
    assert office.inbox.withdrawals == []


async def test_never_withdrawn_when_decided_at_once(make_office: MakeOffice) -> None:
    script_refund_and_expense()
    office = await make_office()
    office.inbox.decide = {"approved": True}  # both channels decide at once
    result = await run(office)
    assert result.status is ExecutionStatus.COMPLETED
    assert office.inbox.withdrawals == []


async def test_withdraw_runs_in_the_pause_frame(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    first = await run(office, owner_id="U9")
    channel = mock_of(RecordingRefundChannel)
    await office.app.cancel(first.thread_id, tenant_id="acme")
    assert channel.withdraw.call_count == 1
    withdrawal: ChannelWithdrawal = channel.withdraw.call_args.args[0]
    assert withdrawal.pause_id == office.inbox.last("refund-card-tool").pause_id
    assert withdrawal.value.tool == "refund-card-tool"
    assert withdrawal.resolution is PauseResolution.CANCELLED


async def test_a_role_resolves_to_its_mocked_implementation(make_office: MakeOffice) -> None:
    channel = mock_of(RecordingRefundChannel)
    script_refund()
    office = await make_office()
    first = await run(office)
    assert channel.send.call_count == 1
    ask = channel.send.call_args.args[0]
    assert ask.role == "refund-approval-channel"
    assert first.status is ExecutionStatus.PAUSED
    assert office.inbox.asks == []  # the mock was sent the ask, not the implementation it mocks


async def test_a_failing_withdraw_is_one_warning_and_cancel_goes_on(
    make_office: MakeOffice, caplog: pytest.LogCaptureFixture
) -> None:
    script_refund_and_expense()
    office = await make_office()
    first = await run(office)
    channel = mock_of(RecordingRefundChannel)
    channel.withdraw.side_effect = RuntimeError("slack said no")
    with caplog.at_level(logging.WARNING, logger="countersign"):
        results = await office.app.cancel(first.thread_id, tenant_id="acme")
    assert results[0].status is ExecutionStatus.CANCELLED
    warnings = [r for r in caplog.records if "channel.withdraw-failed" in r.getMessage()]
    assert len(warnings) == 1
    assert first.execution_id in warnings[0].getMessage()
    refund_id = office.inbox.last("refund-card-tool").pause_id
    assert refund_id not in caplog.text


async def test_a_hanging_withdraw_is_cut_off_at_the_tool_timeout(
    make_office: MakeOffice, caplog: pytest.LogCaptureFixture
) -> None:
    script_refund()
    office = await make_office()
    first = await run(office)
    channel = mock_of(RecordingRefundChannel)
    release = asyncio.Event()

    async def hang(_: ChannelWithdrawal) -> None:
        await release.wait()

    channel.withdraw.side_effect = hang
    with caplog.at_level(logging.WARNING, logger="countersign"):
        cancelling = asyncio.create_task(office.app.cancel(first.thread_id, tenant_id="acme"))
        while channel.withdraw.call_count == 0:  # noqa: ASYNC110 - cancel reaches withdraw via the DB
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.01)
        assert not cancelling.done()
        await office.clock.advance(timedelta(seconds=31))  # the tool's timeout: 30 s
        results = await asyncio.wait_for(cancelling, timeout=5)
    assert results[0].status is ExecutionStatus.CANCELLED
    assert "channel.withdraw-failed: TimeoutError" in caplog.text


async def test_a_pause_cancelled_while_its_send_returns_is_told_by_its_own_step(
    make_office: MakeOffice,
) -> None:
    from bot import ChannelAsk, ChannelOutcome
    from bot.core.enums import PauseStatus

    script_refund()
    office = await make_office()
    channel = mock_of(RecordingRefundChannel)
    store = inspect_app(office.app).store
    cancelled = asyncio.Event()

    async def slow_send(ask: ChannelAsk) -> object:
        # the thread is cancelled while the question is being posted
        record = await store.find("acme", ask.pause_id)
        assert record is not None
        closed = await store.close(
            ask.pause_id, Cancelled(), at=office.clock.now(), tenant_id="acme"
        )
        assert closed is not None and not closed.is_sent  # the closer cannot tell the channel
        cancelled.set()
        return ChannelOutcome.await_reply()

    channel.send.side_effect = slow_send
    result = await run(office)
    assert cancelled.is_set()
    assert channel.withdraw.call_count == 1  # told once, by the step, once send returned
    assert channel.withdraw.call_args.args[0].resolution is PauseResolution.CANCELLED
    assert result.pending == []
    record = await store.find("acme", channel.send.call_args.args[0].pause_id)
    assert record is not None and record.status is PauseStatus.CANCELLED


async def test_cancelling_a_thread_whose_run_ended_leaves_it_as_it_ended(
    make_office: MakeOffice,
) -> None:
    """The tree's opening finds it ended and gives its lease back: nothing is re-ended."""
    script_refund()
    office = await make_office()
    first = await run(office)
    done = await office.app.resume(
        office.inbox.last("refund-card-tool").pause_id,
        decision={"approved": True},
        tenant_id="acme",
        answered_by="m",
    )
    assert done.status is ExecutionStatus.COMPLETED and done.moved
    [after] = await office.app.cancel(first.thread_id, tenant_id="acme")
    assert after.status is ExecutionStatus.COMPLETED
    assert after.output == done.output
