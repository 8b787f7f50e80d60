"""``App.answer_all``: five refunds of one agent turn answered in one call, each settling its own
pause (its own audit entry), one answered elsewhere meanwhile skipped, a retry answering
nothing twice, each tool run once; a batch rejected with one reason each records."""

from __future__ import annotations

from typing import Any

import pytest

from bot import AlreadyClosed, Answered, AnswerOutcome, ExecutionStatus
from bot.runtime import answers
from bot.testing import call_tool, mock_llm
from tests.conftest import MakeOffice, Office
from tests.office import OfficeAgent, RefundCardTool
from tests.runtime.helpers import run

ORDERS = [f"A-{n}" for n in range(1, 6)]


async def five_refunds(make_office: MakeOffice) -> tuple[Office, list[str]]:
    mock_llm(OfficeAgent).then_return(
        [call_tool(RefundCardTool, {"order_id": o, "amount": 10.0}) for o in ORDERS], "done"
    )
    office = await make_office()
    result = await run(office)
    assert result.status is ExecutionStatus.PAUSED and len(result.pending) == 5
    return office, [a.pause_id for a in office.inbox.asks]


async def test_approve_all_settles_each_once_and_skips_one_answered_meanwhile(
    make_office: MakeOffice,
) -> None:
    office, pause_ids = await five_refunds(make_office)
    elsewhere = await office.app.answer(
        pause_ids[2], tenant_id="acme", by="U0OTHER", decision={"approved": True}
    )
    assert isinstance(elsewhere, Answered)

    outcomes = await office.app.answer_all(
        pause_ids, tenant_id="acme", by="U0MANAGER", decision={"approved": True}
    )
    assert [type(o).__name__ for o in outcomes] == [
        "Answered", "Answered", "AlreadyClosed", "Answered", "Answered",
    ]  # fmt: skip
    closed = outcomes[2]
    assert isinstance(closed, AlreadyClosed) and closed.pause.responder == "U0OTHER"
    results = {o.result.status for o in outcomes if isinstance(o, Answered) and o.result}
    assert results == {ExecutionStatus.COMPLETED}
    assert sorted(args["order_id"] for _, args in office.ledger.runs) == ORDERS  # once each

    again = await office.app.answer_all(  # Slack retries the same interaction
        pause_ids + pause_ids[:1], tenant_id="acme", by="U0MANAGER", decision={"approved": True}
    )
    assert len(again) == 5 and all(isinstance(o, AlreadyClosed) for o in again)
    assert len(office.ledger.runs) == 5

    answered = [o for o in outcomes if isinstance(o, Answered)]
    assert answered[0].result is not None
    record = await office.app.get_result(
        answered[0].result.execution_id, tenant_id="acme", record=True
    )
    assert record.record is not None
    assert sorted(e.responder or "" for e in record.record.pauses) == [
        "U0MANAGER", "U0MANAGER", "U0MANAGER", "U0MANAGER", "U0OTHER",
    ]  # fmt: skip


async def test_a_batch_rejected_with_one_reason_records_it_for_each(
    make_office: MakeOffice,
) -> None:
    office, pause_ids = await five_refunds(make_office)
    outcomes = await office.app.answer_all(
        pause_ids,
        tenant_id="acme",
        by="U0MANAGER",
        decision={"approved": False, "reason": "duplicate batch"},
    )
    assert all(isinstance(o, Answered) for o in outcomes)
    assert office.ledger.runs == []
    first = outcomes[0]
    assert isinstance(first, Answered) and first.result is not None
    record = await office.app.get_result(first.result.execution_id, tenant_id="acme", record=True)
    assert record.record is not None and len(record.record.pauses) == 5
    assert {(e.decision or {}).get("reason") for e in record.record.pauses} == {"duplicate batch"}


async def test_a_batch_takes_the_one_answer_path_for_each_question(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    office, pause_ids = await five_refunds(make_office)
    taken: list[str] = []
    path = answers.answer

    async def counted(*args: Any, **kwargs: Any) -> AnswerOutcome:
        taken.append(args[2].by)
        return await path(*args, **kwargs)

    monkeypatch.setattr("bot.app.answer", counted)  # the runtime's path, as App calls it
    await office.app.answer_all(pause_ids, tenant_id="acme", by="U0M", decision={"approved": True})
    assert taken == ["U0M"] * 5
