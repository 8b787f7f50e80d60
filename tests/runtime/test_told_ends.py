"""The outbox of a run's end: a run that ended is told to the channels once. When the telling
did not happen (the process died, a handler failed), the sweep tells it after a grace, with
every answer of its tree, and never twice."""

from __future__ import annotations

from datetime import timedelta

from bot import ExecutionResumeEvent, ExecutionStatus
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund


async def test_an_end_a_handler_failed_to_tell_is_told_by_the_sweep_once(
    make_office: MakeOffice,
) -> None:
    script_refund()
    office = await make_office()
    await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    told: list[ExecutionResumeEvent] = []

    async def flaky_channel(event: ExecutionResumeEvent) -> None:
        told.append(event)
        if len(told) == 1:
            raise ConnectionError("Slack is down")

    office.app.on_execution_resume(flaky_channel)

    result = await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )  # the handler's failure does not fail the answer
    assert result.status is ExecutionStatus.COMPLETED
    assert len(told) == 1

    await office.clock.advance(timedelta(seconds=20))
    assert len(told) == 1  # the grace: a live process may still be telling
    await office.clock.advance(timedelta(seconds=20))
    assert len(told) == 2
    again = told[1]
    assert again.by_sweep and again.result is not None
    assert again.result.status is ExecutionStatus.COMPLETED
    assert [p.responder for p in again.answered] == ["m"]

    await office.clock.advance(timedelta(minutes=5))
    assert len(told) == 2  # told once


async def test_an_end_told_at_once_is_not_told_again(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    await run(office)
    told: list[ExecutionResumeEvent] = []
    office.app.on_execution_resume(told.append)

    await office.app.resume(
        office.inbox.last("refund-card-tool").pause_id,
        decision={"approved": False},
        tenant_id="acme",
        answered_by="m",
    )
    await office.clock.advance(timedelta(minutes=5))

    assert len(told) == 1 and not told[0].by_sweep


async def test_an_end_nobody_listens_to_is_recorded_told_with_it(make_office: MakeOffice) -> None:
    """No resume handler: nothing to tell, so the end never waits in the outbox (and costs no
    second write)."""
    script_refund()
    office = await make_office()
    await run(office)
    await office.app.resume(
        office.inbox.last("refund-card-tool").pause_id,
        decision={"approved": True},
        tenant_id="acme",
        answered_by="m",
    )
    told: list[ExecutionResumeEvent] = []
    office.app.on_execution_resume(told.append)  # a listener that comes later

    await office.clock.advance(timedelta(minutes=5))

    assert told == []
