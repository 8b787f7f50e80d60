"""A resumed step starts from the copy of its pause the drain read, and a stale copy is harmless."""

from __future__ import annotations

from typing import Any

from bot import ExecutionStatus, PauseStatus
from bot.runtime.frame import RunFrame
from bot.runtime.seam import PausePlace, Taken, ask_channel
from bot.store.closings import Replied
from bot.store.records import PauseAnswer, PauseRecord
from bot.testing import inspect_app
from tests.conftest import MakeOffice, Office
from tests.runtime.helpers import run, script_refund


def _count_calls(office: Office, *names: str) -> dict[str, int]:
    store: Any = inspect_app(office.app).store
    counts = dict.fromkeys(names, 0)
    for name in names:
        original = getattr(store, name)

        async def counted(*args: Any, _name: str = name, _original: Any = original) -> Any:
            counts[_name] += 1
            return await _original(*args)

        setattr(store, name, counted)
    return counts


async def test_a_resumed_step_does_not_read_its_pause_again(make_office: MakeOffice) -> None:
    script_refund("refunded")
    office = await make_office()
    paused = await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    reads = _count_calls(office, "get_or_create", "find_by_key")
    done = await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    assert done.status is ExecutionStatus.COMPLETED and done.execution_id == paused.execution_id
    assert reads == {"get_or_create": 0, "find_by_key": 0}
    assert [r[0] for r in office.ledger.runs] == ["refund"]


async def _stale_copy(office: Office) -> tuple[PauseRecord, RunFrame, PausePlace]:
    """A paused refund, answered: the RESOLVED copy a drain would read, and where it waits."""
    await run(office)
    store = inspect_app(office.app).store
    pause_id = office.inbox.last("refund-card-tool").pause_id
    answer = PauseAnswer(decision={"approved": True}, responder="m")
    assert await store.close(
        pause_id, Replied(answer=answer), at=office.clock.now(), tenant_id="acme"
    )
    record = await store.find("acme", pause_id)
    assert record is not None
    frame = RunFrame(
        tenant_id=record.tenant_id,
        owner_id=record.owner_id,
        execution_id=record.execution_id,
        root_execution_id=record.root_execution_id,
        thread_id=record.thread_id,
        workflow="office-workflow",
    ).answering([record])
    index = int(record.idempotency_key.rsplit("#", 1)[1])
    place = PausePlace(agent=record.agent, checkpoint_ns=record.node_id, index=index)
    return record, frame, place


async def test_the_copy_the_drain_read_takes_the_answer(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    record, frame, place = await _stale_copy(office)
    runtime = inspect_app(office.app).runtime
    binding = runtime.assembly.tool_named(record.ask.tool)
    assert binding is not None
    outcome = await ask_channel(runtime, binding, frame, record.ask, place)
    assert isinstance(outcome, Taken) and outcome.first_take and outcome.decision.approved
    now = await runtime.store.find("acme", record.pause_id)
    assert now is not None and now.status is PauseStatus.TAKEN


async def test_a_stale_copy_never_answers_twice(make_office: MakeOffice) -> None:
    script_refund()
    office = await make_office()
    record, frame, place = await _stale_copy(office)
    runtime = inspect_app(office.app).runtime
    assert await runtime.store.take(record)  # another pass took it after the read
    binding = runtime.assembly.tool_named(record.ask.tool)
    assert binding is not None
    outcome = await ask_channel(runtime, binding, frame, record.ask, place)
    assert isinstance(outcome, Taken) and not outcome.first_take  # so the tool does not run
