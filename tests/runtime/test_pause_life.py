"""Spec: "A pause's life" — statuses, resolutions, times on the clock, retention."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot import NotPausedError, PauseResolution, PauseStatus, UnknownPauseError
from bot.store.closings import Cancelled, Replied
from bot.testing import inspect_app
from tests.conftest import MakeOffice, Office
from tests.runtime.helpers import run, script_refund, script_refund_and_expense


async def _answered_refund(make_office: MakeOffice) -> tuple[Office, str]:
    script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    await office.clock.advance(timedelta(minutes=5))
    await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    return office, pause_id


async def test_times_come_from_the_application_clock(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    asked = office.clock.now()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    await office.clock.advance(timedelta(minutes=5))
    await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    record = await inspect_app(office.app).store.find("acme", pause_id)
    assert record is not None
    assert record.asked_at == asked
    assert record.resolved_at == asked + timedelta(minutes=5)


async def test_a_late_answer_within_retention_is_not_paused_after_it_unknown(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await _answered_refund(make_office)
    await office.clock.advance(timedelta(hours=23, minutes=59))
    with pytest.raises(NotPausedError):
        await office.app.resume(
            pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    await office.clock.advance(timedelta(minutes=2))  # the sweep runs every 30 s on the clock
    with pytest.raises(UnknownPauseError):
        await office.app.resume(
            pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )


async def test_retention_never_removes_a_pending_pause_and_recovery_takes_a_resolved_one(
    make_office: MakeOffice,
) -> None:
    script_refund_and_expense()
    office = await make_office()
    await run(office)
    store = inspect_app(office.app).store
    refund = office.inbox.last("refund-card-tool")
    # phase 1 only, as if the instance that recorded it died before its pass
    from bot.store.records import PauseAnswer

    answer = PauseAnswer(decision={"approved": True}, responder="m")
    assert await store.close(
        refund.pause_id, Replied(answer=answer), at=office.clock.now(), tenant_id="acme"
    )
    await office.clock.advance(timedelta(days=30))
    expense = office.inbox.last("book-expense-tool")
    pending = await store.find("acme", expense.pause_id)
    assert pending is not None and pending.status is PauseStatus.PENDING
    # the resolved one was continued by the recovery sweep, then aged out like any other
    assert await store.find("acme", refund.pause_id) is None
    assert [r[0] for r in office.ledger.runs] == ["refund"]


async def test_the_audit_trail_outlives_the_pause_record(make_office: MakeOffice) -> None:
    office, pause_id = await _answered_refund(make_office)
    record = await inspect_app(office.app).store.find("acme", pause_id)
    assert record is not None
    await office.clock.advance(timedelta(days=2))
    assert await inspect_app(office.app).store.find("acme", pause_id) is None
    result = await office.app.get_result(record.execution_id, tenant_id="acme", record=True)
    assert result.record is not None
    [entry] = result.record.pauses
    assert entry.resolution is PauseResolution.REPLIED
    assert entry.responder == "m"


async def test_retention_is_configurable(make_office: MakeOffice) -> None:
    from dataclasses import replace

    from bot.components.specs import SPEC_ATTRIBUTE
    from tests.office import OfficeApplication

    short = type("ShortRetention", (), {})
    spec = replace(
        OfficeApplication.__dict__[SPEC_ATTRIBUTE],
        cls=short,
        pause_record_retention=timedelta(minutes=10),
    )
    setattr(short, SPEC_ATTRIBUTE, spec)
    script_refund()
    office = await make_office(short)
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    await office.clock.advance(timedelta(minutes=9))
    assert await inspect_app(office.app).store.find("acme", pause_id) is not None
    await office.clock.advance(timedelta(minutes=2))
    assert await inspect_app(office.app).store.find("acme", pause_id) is None


async def test_sweep_deletes_in_batches(make_office: MakeOffice) -> None:
    office = await make_office()
    store = inspect_app(office.app).store
    from bot.core.dtos import ToolCallApprovalAsk
    from bot.core.enums import PauseAnswerer
    from bot.store.records import NewPause

    now = office.clock.now()
    for i in range(7):
        record = await store.get_or_create(
            NewPause(
                pause_id=f"{i:032x}",
                tenant_id="acme",
                idempotency_key=f"k{i}",
                root_execution_id="r",
                execution_id="r",
                thread_id="t",
                owner_id="o",
                answered_by=PauseAnswerer.CHANNEL,
                role="refund-approval-channel",
                channel="c",
                agent="a",
                ask=ToolCallApprovalAsk(tool="refund-card-tool", arguments={}, call_id=f"c{i}"),
                node_id="n",
                item_index=None,
                child_execution_id=None,
                tool_loop_iteration=None,
                asked_at=now,
            )
        )
        await store.close(record.pause_id, Cancelled(), at=now, tenant_id="acme")
    assert await store.delete_resolved_before(now + timedelta(seconds=1), batch_size=3) == 7
    assert await store.delete_resolved_before(now + timedelta(seconds=1), batch_size=3) == 0
