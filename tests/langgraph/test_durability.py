"""Attached graphs across an App restart, recovery, and two instances on PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from bot import Answered, App, ExecutionStatus
from bot.testing import FakeClock, inspect_app, test_with
from bot.testing.llm import ScriptedChatModel
from tests.databases import postgres_database
from tests.langgraph.kit import OFFICE, Outbox, RefundApproval, Refunds, refund_agent, tool_calls

ASK = {"messages": [{"role": "user", "content": "refund orders 7 and 8"}]}


def two_refunds() -> ScriptedChatModel:
    return ScriptedChatModel(component="refund").then_return(
        tool_calls(
            ("refund", {"order_id": "7", "amount": 40}), ("refund", {"order_id": "8", "amount": 5})
        ),
        "Done.",
    )


async def test_an_answer_after_a_restart_on_a_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    outbox, refunds, model = Outbox(), Refunds(), two_refunds()
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "agent.db")) as saver:
        graph = refund_agent(model, refunds, checkpointer=saver)
        async with await App.create(
            OFFICE.application, database_url=url, services={Outbox: outbox}
        ) as app:
            agent = app.langgraph("refund-agent", graph, role=RefundApproval)
            paused = await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
            assert len(paused.pending) == 2
        first, second = outbox.pause_ids
        async with await App.create(
            OFFICE.application, database_url=url, services={Outbox: outbox}
        ) as app:
            app.langgraph("refund-agent", graph, role=RefundApproval)  # attached again
            waiting = await app.resume(
                first, decision={"approved": True}, tenant_id="acme", answered_by="M1"
            )
            assert waiting.status is ExecutionStatus.PAUSED
            done = await app.resume(
                second, reply="approve", tenant_id="acme", answered_by="M1", record=True
            )
    assert done.status is ExecutionStatus.COMPLETED
    assert refunds.by_order == [{"order_id": "7", "amount": 40}, {"order_id": "8", "amount": 5}]
    assert len(outbox.asks) == 2  # nothing posted twice across the restart
    assert done.record is not None
    assert [e.ran_with for e in done.record.pauses] == [
        {"order_id": "7", "amount": 40},
        {"order_id": "8", "amount": 5},
    ]


async def test_recovery_continues_answers_recorded_and_never_continued(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    outbox, refunds, clock = Outbox(), Refunds(), FakeClock()
    graph = refund_agent(two_refunds(), refunds, checkpointer=InMemorySaver())
    async with await App.create(
        OFFICE.application, database_url=url, services={Outbox: outbox}, clock=clock
    ) as app:
        agent = app.langgraph("refund-agent", graph, role=RefundApproval)
        await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
        for pause_id in outbox.pause_ids:  # phase 1 only: the process "dies" before phase 2
            recorded = await app.answer(
                pause_id, tenant_id="acme", by="M1", reply="approve", continue_run=False
            )
            assert isinstance(recorded, Answered)
    async with await App.create(
        OFFICE.application, database_url=url, services={Outbox: outbox}, clock=clock
    ) as app:
        assert await app.recover() == 0  # not attached yet: the tree waits for its graph
        app.langgraph("refund-agent", graph, role=RefundApproval)
        await clock.advance(timedelta(seconds=30))
        assert refunds.by_order == [{"order_id": "7", "amount": 40}, {"order_id": "8", "amount": 5}]
        [row] = await app.cancel("t1", tenant_id="acme")  # already ended: cancel changes nothing
        assert row.status is ExecutionStatus.COMPLETED


@pytest.mark.postgres
async def test_two_instances_answer_the_two_pauses_of_one_interrupt_at_once() -> None:
    outbox, refunds = Outbox(), Refunds()
    graph = refund_agent(two_refunds(), refunds, checkpointer=InMemorySaver())
    async with (
        postgres_database() as url,
        test_with(OFFICE.application, instances=2, database_url=url, services={Outbox: outbox}) as (
            one,
            two,
        ),
    ):
        agent = one.langgraph("refund-agent", graph, role=RefundApproval)
        two.langgraph("refund-agent", graph, role=RefundApproval)
        await agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
        first, second = outbox.pause_ids
        results = await asyncio.gather(
            one.resume(first, decision={"approved": True}, tenant_id="acme", answered_by="M1"),
            two.resume(second, decision={"approved": True}, tenant_id="acme", answered_by="M2"),
        )
        assert ExecutionStatus.COMPLETED in {r.status for r in results}
        final = await one.get_result(results[0].execution_id, tenant_id="acme")
        assert final.status is ExecutionStatus.COMPLETED
    assert refunds.by_order == [{"order_id": "7", "amount": 40}, {"order_id": "8", "amount": 5}]


@pytest.mark.postgres
async def test_two_instances_invoking_one_thread_at_once_start_one_execution() -> None:
    outbox, refunds, model = Outbox(), Refunds(), two_refunds()
    graph = refund_agent(model, refunds, checkpointer=InMemorySaver())
    async with (
        postgres_database() as url,
        test_with(OFFICE.application, instances=2, database_url=url, services={Outbox: outbox}) as (
            one,
            two,
        ),
    ):
        agents = [app.langgraph("refund-agent", graph, role=RefundApproval) for app in (one, two)]
        results = await asyncio.gather(
            *(
                agent.ainvoke(ASK, thread_id="t1", tenant_id="acme", owner_id="U1")
                for agent in agents
            )
        )
        executions = await inspect_app(one).store.list_executions_by_thread("acme", "t1")
    assert [e.execution_id for e in executions] == [results[0].execution_id]
    assert results[1].execution_id == results[0].execution_id
    assert sorted(r.moved for r in results) == [False, True]  # the other: as it stands
    assert len(model.calls) == 1 and len(outbox.asks) == 2  # one run asked its two questions
