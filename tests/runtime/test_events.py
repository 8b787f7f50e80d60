"""Events: on_execution_pause each time the execution rests; on_execution_resume."""

from __future__ import annotations

from bot import ExecutionPauseEvent, ExecutionResumeEvent
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund_and_expense


async def test_pause_fires_each_rest_and_resume_carries_the_answerer(
    make_office: MakeOffice,
) -> None:
    script_refund_and_expense()
    office = await make_office()
    pauses: list[ExecutionPauseEvent] = []
    resumes: list[ExecutionResumeEvent] = []

    async def on_pause(event: ExecutionPauseEvent) -> None:
        pauses.append(event)

    office.app.on_execution_pause(on_pause)
    office.app.on_execution_resume(resumes.append)  # sync handlers too
    first = await run(office)
    assert len(pauses) == 1 and len(pauses[0].pending) == 2
    assert pauses[0].execution_id == first.execution_id
    # a CHANNEL pause's id never reaches an event
    refund_id = office.inbox.last("refund-card-tool").pause_id
    assert all(p.pause_id != refund_id for e in pauses for p in e.pending)
    await office.app.resume(
        refund_id, decision={"approved": True}, tenant_id="acme", answered_by="mgr"
    )
    assert len(pauses) == 2 and [p.ask.tool for p in pauses[1].pending] == ["book-expense-tool"]
    assert resumes[-1].answered_by == "mgr"
    expense_id = pauses[1].pending[0].pause_id
    assert expense_id is not None
    await office.app.resume(
        expense_id, decision={"approved": True}, tenant_id="acme", owner_id="U1"
    )
    assert len(pauses) == 2  # finished: no rest
    assert resumes[-1].answered_by == "U1"
    assert len(resumes) == 2
