"""The outbox of a run's end: a run that ended is told to the channels once. When the telling
did not happen (the process died, a handler failed), the sweep tells it after a grace, with
every answer of its tree, and never twice."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from bot import ExecutionResumeEvent, ExecutionStatus
from bot.core.errors import RunInterruptedError
from bot.core.results import EndTold
from tests.conftest import MakeOffice, Office
from tests.databases import BACKENDS, database
from tests.runtime.helpers import run, script_refund, script_refund_and_expense


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


async def test_the_last_handler_may_carry_the_end_told_and_the_app_then_writes_none(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record that the end was told rides on the last handler's own write
    (``ExecutionResumeEvent.end_told``): carried, the App makes no write of its own."""
    script_refund()
    office = await make_office()
    await run(office)
    store = office.app._runtime.store
    marks: list[str] = []
    original = store.mark_told

    async def counted(root_execution_id: str, at: datetime) -> bool:
        marks.append(root_execution_id)
        return await original(root_execution_id, at)

    monkeypatch.setattr(store, "mark_told", counted)
    given: list[EndTold | None] = []

    async def first(event: ExecutionResumeEvent) -> None:
        given.append(event.end_told)

    async def carrying(event: ExecutionResumeEvent) -> None:
        given.append(event.end_told)
        assert event.end_told is not None
        await original(event.end_told.root_execution_id, office.clock.now())  # its own write
        event.end_told.carried()

    office.app.on_execution_resume(first)
    office.app.on_execution_resume(carrying)

    result = await office.app.resume(
        office.inbox.last("refund-card-tool").pause_id,
        decision={"approved": True},
        tenant_id="acme",
        answered_by="m",
    )

    assert given[0] is None and given[1] is not None  # the last handler only
    assert given[1].root_execution_id == result.execution_id
    assert marks == []  # carried: no write of the App's
    await office.clock.advance(timedelta(minutes=5))
    assert len(given) == 2  # told, never again


async def test_an_end_not_carried_is_recorded_by_the_app_and_a_failure_before_the_last_gives_none(
    make_office: MakeOffice,
) -> None:
    """A handler after a failed one is given no end to carry (the end stays untold, and the
    sweep tells it again); one that does not carry it leaves it to the App's own write."""
    script_refund()
    office = await make_office()
    await run(office)
    given: list[EndTold | None] = []

    async def failing(event: ExecutionResumeEvent) -> None:
        if not event.by_sweep:
            raise ConnectionError("Slack is down")

    office.app.on_execution_resume(failing)
    office.app.on_execution_resume(lambda event: given.append(event.end_told))

    await office.app.resume(
        office.inbox.last("refund-card-tool").pause_id,
        decision={"approved": True},
        tenant_id="acme",
        answered_by="m",
    )
    assert given == [None]

    await office.clock.advance(timedelta(minutes=1))  # told again by the sweep, not carried
    assert len(given) == 2 and given[1] is not None and not given[1].is_carried
    await office.clock.advance(timedelta(minutes=5))
    assert len(given) == 2  # recorded told (the sweep's claim): told once


@pytest.mark.parametrize("kind", BACKENDS)
async def test_an_answer_a_cut_off_pass_took_is_told_by_the_move_that_continues_its_tree(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch, kind: str, tmp_path: Path
) -> None:
    """The refund's move takes its answer and runs its tool, then its last write meets the
    database gone: the pass is cut off, the refund told to nobody. The expense's answer then
    continues the tree (before any recovery does): its move tells the refund too, or the
    refund's question would keep its buttons for good (nothing else would tell it: the tree
    ends, told, and no sweep looks at it again)."""
    script_refund_and_expense()
    async with database(kind, tmp_path) as url:
        await _told_though_cut_off(await make_office(database_url=url), monkeypatch)


async def _told_though_cut_off(office: Office, monkeypatch: pytest.MonkeyPatch) -> None:
    await run(office)
    refund = office.inbox.last("refund-card-tool").pause_id
    expense = office.inbox.last("book-expense-tool").pause_id
    told: list[ExecutionResumeEvent] = []
    office.app.on_execution_resume(told.append)
    store = office.app._runtime.store
    rest = store.rest
    cut: list[str] = []

    async def gone_once(*args: Any, **kwargs: Any) -> Any:
        if not cut:
            cut.append("rest")
            raise OperationalError(
                "UPDATE cs_pauses ...",
                {},
                ConnectionResetError("server closed the connection unexpectedly"),
                connection_invalidated=True,
            )
        return await rest(*args, **kwargs)

    monkeypatch.setattr(store, "rest", gone_once)
    with pytest.raises((RunInterruptedError, OperationalError)):  # left to recovery
        await office.app.resume(
            refund, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert cut == ["rest"]

    result = await office.app.resume(
        expense, decision={"approved": True}, tenant_id="acme", owner_id="U1"
    )
    assert result.status is ExecutionStatus.COMPLETED
    told_answers = [p.pause_id for event in told for p in event.answered]
    assert sorted(told_answers) == sorted([refund, expense])  # each told, once
