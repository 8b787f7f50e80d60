"""``inspect_app``: the inspector reads the App's own store and sees each pass it runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot import ExecutionStatus, PauseStatus
from bot.testing import inspect_app
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund

T = TypeVar("T")


async def test_the_inspector_reads_the_pause_the_app_wrote(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    paused = await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    record = await inspect_app(office.app).store.find("acme", pause_id)
    assert record is not None
    assert record.status is PauseStatus.PENDING
    assert record.root_execution_id == paused.execution_id
    assert inspect_app(office.app).runtime.clock is office.clock


async def test_each_pass_goes_through_around_each_pass(make_office: MakeOffice) -> None:
    script_refund("refunded")
    office = await make_office()
    passes: list[str] = []

    async def seen(root: str, pass_: Callable[[], Awaitable[T]]) -> T:
        passes.append(root)
        return await pass_()

    inspect_app(office.app).around_each_pass(seen)
    paused = await run(office)
    done = await office.app.resume(
        office.inbox.last("refund-card-tool").pause_id,
        decision={"approved": True},
        tenant_id="acme",
        answered_by="m",
    )
    assert done.status is ExecutionStatus.COMPLETED
    assert passes == [paused.execution_id, paused.execution_id]
