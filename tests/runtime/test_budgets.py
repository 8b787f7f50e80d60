"""Spec: a model interpreter's call is checked against the tree's budgets before it is made,
counted in the ledger at once and in the execution's spend when the step takes the answer —
once — and traced under the pause's execution (caller ``reply-interpreter:<name>``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot import (
    Budget,
    BudgetExceededError,
    ExecutionStatus,
    ModelPrice,
    PauseStatus,
    Spend,
    ToolCallApprovalDecision,
    UninterpretableReplyError,
)
from bot.components.specs import ApplicationSpec, WorkflowSpec
from bot.core.enums import ExecutionStatus as Status
from bot.runtime.assembly import Assembly
from bot.runtime.budgets import budget_checks, lineage
from bot.store.database import Database
from bot.store.ledger import NewModelCall, SpendScope, SqlLedger
from bot.store.records import ExecutionRow
from bot.testing import FakeClock, inspect_app, mock_llm, reply_with
from tests.databases import BACKENDS, database
from tests.runtime.reply_desk import (
    KIMI,
    DeskApp,
    RefundReplyInterpreter,
    open_desk,
    script_agent,
)

APPROVE = reply_with(ToolCallApprovalDecision, {"approved": True})
UNREADABLE = "I will think about it"  # a model reply with no answer-tool call


@dataclass
class PricedProvider:
    """Serves kimi at a price (its chat model is never made: the tests script it)."""

    prices: dict[str, ModelPrice] = field(default_factory=dict)
    name: str = "priced"

    def serves(self, model: str) -> bool:
        return model == KIMI

    def chat_model(self, model: str) -> Any:
        raise AssertionError("scripted by mock_llm")

    def is_decision_model(self, model: str) -> bool:
        return False

    def price_of(self, model: str) -> ModelPrice | None:
        return self.prices.get(model)


async def _read(desk: DeskApp, pause_id: str, reply: str = "hmm", tenant_id: str = "acme") -> Any:
    return await desk.app.resume(
        pause_id, reply=reply, tenant_id=tenant_id, answered_by="manager-17", record=True
    )


async def _unreadable(desk: DeskApp, pause_id: str, tenant_id: str = "acme") -> None:
    with pytest.raises(UninterpretableReplyError):
        await _read(desk, pause_id, tenant_id=tenant_id)


async def _exceeded(desk: DeskApp, pause_id: str, tenant_id: str = "acme") -> BudgetExceededError:
    with pytest.raises(BudgetExceededError) as caught:
        await _read(desk, pause_id, tenant_id=tenant_id)
    assert caught.value.code == "budget.exceeded"
    assert await desk.status(pause_id, tenant_id) is PauseStatus.PENDING  # the pause untouched
    assert pause_id not in str(caught.value)
    return caught.value


def test_a_budget_needs_a_limit_and_sane_values() -> None:
    with pytest.raises(ValueError, match="max_cost, max_calls"):
        Budget()
    with pytest.raises(ValueError):
        Budget(max_calls=-1)
    with pytest.raises(ValueError):
        Budget(max_cost=float("nan"))
    with pytest.raises(ValueError):
        Budget(max_calls=1, window=timedelta(0))
    assert Budget(max_calls=0).max_calls == 0


async def test_the_application_budget_is_checked_before_the_model_is_called() -> None:
    script_agent()
    model = mock_llm(RefundReplyInterpreter).then_return(UNREADABLE, UNREADABLE, APPROVE)
    async with open_desk(budget=Budget(max_calls=2)) as desk:
        await desk.execute()
        pause_id = desk.desk.pause_of("refund-card-tool")
        await _unreadable(desk, pause_id)  # an unreadable answer still counts: the call was made
        await _unreadable(desk, pause_id)
        error = await _exceeded(desk, pause_id)
        assert "application office" in error.message
        assert len(model.calls) == 2  # the model was not called a third time
        rows = await inspect_app(desk.app).ledger.calls("acme", _root(desk, pause_id))
        assert len(rows) == 2  # the refused call is not in the ledger
        done = await desk.app.resume(
            pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert done.status is ExecutionStatus.COMPLETED


async def test_a_rolling_window_on_the_application_clock() -> None:
    clock = FakeClock()
    script_agent()
    mock_llm(RefundReplyInterpreter).then_return(UNREADABLE, APPROVE)
    budget = Budget(max_calls=1, window=timedelta(hours=1))
    async with open_desk(clock, budget=budget) as desk:
        await desk.execute()
        pause_id = desk.desk.pause_of("refund-card-tool")
        await _unreadable(desk, pause_id)
        error = await _exceeded(desk, pause_id)
        assert "in the last 1:00:00" in error.message
        await clock.advance(timedelta(minutes=61))
        result = await _read(desk, pause_id, "fine")
    assert result.status is ExecutionStatus.COMPLETED


async def test_the_application_budget_is_per_tenant() -> None:
    script_agent(executions=2, answered=False)
    mock_llm(RefundReplyInterpreter).then_return(UNREADABLE, UNREADABLE)
    async with open_desk(budget=Budget(max_calls=1)) as desk:
        await desk.execute("acme")
        acme = desk.desk.pause_of("refund-card-tool")
        await desk.execute("globex")
        globex = desk.desk.pause_of("refund-card-tool")
        await _unreadable(desk, acme)
        await _exceeded(desk, acme)
        await _unreadable(desk, globex, tenant_id="globex")


async def test_a_workflow_budget_without_window_is_per_execution() -> None:
    script_agent(executions=2, answered=False)
    mock_llm(RefundReplyInterpreter).then_return(UNREADABLE, UNREADABLE)
    async with open_desk(workflow_budget=Budget(max_calls=1)) as desk:
        await desk.execute()
        first = desk.desk.pause_of("refund-card-tool")
        await desk.execute()
        second = desk.desk.pause_of("refund-card-tool")
        await _unreadable(desk, first)
        error = await _exceeded(desk, first)
        assert "workflow office-workflow" in error.message
        assert "for this execution" in error.message
        await _unreadable(desk, second)  # another execution has its own budget


async def test_a_workflow_budget_with_a_window_counts_the_tenant_runs_of_the_workflow() -> None:
    script_agent(executions=3, answered=False)
    mock_llm(RefundReplyInterpreter).then_return(UNREADABLE, UNREADABLE)
    budget = Budget(max_calls=1, window=timedelta(hours=1))
    async with open_desk(workflow_budget=budget) as desk:
        await desk.execute()
        first = desk.desk.pause_of("refund-card-tool")
        await desk.execute()
        second = desk.desk.pause_of("refund-card-tool")
        await desk.execute("globex")
        other = desk.desk.pause_of("refund-card-tool")
        await _unreadable(desk, first)
        await _exceeded(desk, second)
        await _unreadable(desk, other, tenant_id="globex")


async def test_cost_comes_from_the_provider_price_and_the_usage() -> None:
    provider = PricedProvider(
        prices={KIMI: ModelPrice(input_per_million=2.0, output_per_million=10.0)}
    )
    script_agent()
    mock_llm(RefundReplyInterpreter).with_usage(input_tokens=1000, output_tokens=100).then_return(
        UNREADABLE, UNREADABLE, APPROVE
    )
    async with open_desk(budget=Budget(max_cost=0.005), providers=[provider]) as desk:
        await desk.execute()
        pause_id = desk.desk.pause_of("refund-card-tool")
        await _unreadable(desk, pause_id)  # spent 0.003
        await _unreadable(desk, pause_id)  # 0.003 < 0.005 before it: allowed, now 0.006
        error = await _exceeded(desk, pause_id)
        assert "a cost of 0.006 of 0.005" in error.message
        rows = await inspect_app(desk.app).ledger.calls("acme", _root(desk, pause_id))
        registry = desk.app.metrics.registry
    caller = {"caller": "reply-interpreter:refund-reply-interpreter"}
    calls = "countersign_model_calls_total"
    assert registry.get_sample_value(calls, {**caller, "outcome": "ok"}) == 2
    assert registry.get_sample_value(calls, {**caller, "outcome": "over_budget"}) == 1
    spent = registry.get_sample_value("countersign_model_spend_total", caller)
    assert spent == pytest.approx(0.006)
    assert [(r.input_tokens, r.output_tokens) for r in rows] == [(1000, 100), (1000, 100)]
    assert [r.cost for r in rows] == [pytest.approx(0.003), pytest.approx(0.003)]


async def test_each_call_is_traced_under_the_pause_execution() -> None:
    script_agent()
    mock_llm(RefundReplyInterpreter).with_usage(input_tokens=50, output_tokens=5).then_return(
        UNREADABLE, APPROVE
    )
    async with open_desk() as desk:
        started = await desk.execute()
        pause_id = desk.desk.pause_of("refund-card-tool")
        key = await desk.idempotency_key(pause_id)
        await _unreadable(desk, pause_id)
        done = await _read(desk, pause_id, "yes")
        rows = await inspect_app(desk.app).ledger.calls("acme", started.execution_id)
    assert done.status is ExecutionStatus.COMPLETED
    assert [row.caller for row in rows] == ["reply-interpreter:refund-reply-interpreter"] * 2
    for row in rows:
        assert row.model == KIMI
        assert row.execution_id == started.execution_id
        assert row.root_execution_id == started.execution_id
        assert row.workflow == "office-workflow"
        assert row.pause_key == key  # keyed by the step, never by the pause id
        assert row.at.tzinfo is not None
    # only the call whose answer the step took is in the execution's spend
    assert [row.in_execution_spend for row in rows] == [False, True]


async def test_the_execution_spend_counts_the_taken_answer_once() -> None:
    script_agent()
    mock_llm(RefundReplyInterpreter).with_usage(input_tokens=40, output_tokens=4).then_return(
        UNREADABLE, APPROVE
    )
    async with open_desk() as desk:
        started = await desk.execute()
        pause_id = desk.desk.pause_of("refund-card-tool")
        paused = await desk.app.get_result(started.execution_id, tenant_id="acme", record=True)
        assert paused.record is not None and paused.record.spend == Spend()
        await _unreadable(desk, pause_id)
        done = await _read(desk, pause_id, "yes")
        again = await desk.app.get_result(started.execution_id, tenant_id="acme", record=True)
        ledger = inspect_app(desk.app).ledger
        [taken] = [
            r for r in await ledger.calls("acme", started.execution_id) if r.in_execution_spend
        ]
        assert await ledger.count_in_execution_spend(taken.id) is False  # never twice
    expected = Spend(calls=1, input_tokens=40, output_tokens=4, cost=0.0)
    assert done.record is not None and done.record.spend == expected
    assert again.record is not None and again.record.spend == expected


def _root(desk: DeskApp, pause_id: str) -> str:
    [ask] = [a for a in desk.desk.asks if a.pause_id == pause_id]
    return ask.execution_id


# --------------------------------------------------------------------------------------------
# Which budgets a call is checked against (child executions too)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _row(execution_id: str, parent: str | None, workflow: str) -> ExecutionRow:
    return ExecutionRow(
        execution_id=execution_id,
        root_execution_id="root",
        parent_execution_id=parent,
        thread_id="t",
        tenant_id="acme",
        owner_id="U1",
        workflow=workflow,
        status=Status.RUNNING,
        input={},
        output=None,
        error=None,
        created_at=NOW,
        updated_at=NOW,
    )


def _workflow(name: str, budget: Budget | None) -> WorkflowSpec:
    return WorkflowSpec(
        name=name, description="", cls=type(name, (), {}), version="1", flows=(), budget=budget
    )


def test_the_tree_budgets_of_a_call_in_a_child_execution() -> None:
    tree = [
        _row("root", None, "parent-workflow"),
        _row("child", "root", "child-workflow"),
        _row("grandchild", "child", "leaf-workflow"),
        _row("sibling", "root", "child-workflow"),
    ]
    parent, child = (
        _workflow("parent-workflow", Budget(max_calls=9)),
        _workflow("child-workflow", Budget(max_calls=3)),
    )
    leaf = _workflow("leaf-workflow", Budget(max_cost=1.0, window=timedelta(hours=2)))
    application = ApplicationSpec(
        name="office",
        description="",
        cls=type("A", (), {}),
        workflows=(),
        channels=(),
        pause_record_retention=timedelta(hours=24),
        budget=Budget(max_calls=100, window=timedelta(days=1)),
    )
    assembly = Assembly(
        application=application, workflows={w.cls: w for w in (parent, child, leaf)}
    )

    assert [r.execution_id for r in lineage(tree, "grandchild")] == ["grandchild", "child", "root"]
    checks = budget_checks(assembly, tree, "grandchild", NOW)

    assert [(c.owner, c.scope) for c in checks] == [
        ("application office", SpendScope(tenant_id="acme", since=NOW - timedelta(days=1))),
        (
            "workflow leaf-workflow",
            SpendScope(tenant_id="acme", since=NOW - timedelta(hours=2), workflow="leaf-workflow"),
        ),
        (
            "workflow child-workflow",
            SpendScope(
                tenant_id="acme", root_execution_id="root", execution_ids=("child", "grandchild")
            ),
        ),
        ("workflow parent-workflow", SpendScope(tenant_id="acme", root_execution_id="root")),
    ]


# --------------------------------------------------------------------------------------------
# The ledger's store, on SQLite and PostgreSQL


@pytest.fixture(params=BACKENDS)
async def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(NOW)
        yield SqlLedger(opened)


def _call(
    at: datetime, *, execution_id: str = "e1", workflow: str = "w", tenant: str = "acme"
) -> NewModelCall:
    return NewModelCall(
        tenant_id=tenant,
        root_execution_id="root",
        execution_id=execution_id,
        workflow=workflow,
        caller="reply-interpreter:x-reply-interpreter",
        model=KIMI,
        pause_key="root:ns#0",
        at=at,
    )


def _admit_all(spends: list[Spend]) -> None:
    return None


async def test_ledger_scopes_and_a_refused_call_is_rolled_back(ledger: SqlLedger) -> None:
    first = await ledger.open_call(_call(NOW - timedelta(hours=3)), [], _admit_all)
    await ledger.settle_call(first, input_tokens=10, output_tokens=2, cost=0.5)
    second = await ledger.open_call(_call(NOW, execution_id="e2", workflow="v"), [], _admit_all)
    await ledger.open_call(_call(NOW, tenant="globex"), [], _admit_all)

    seen: list[list[Spend]] = []

    def refuse(spends: list[Spend]) -> None:
        seen.append(spends)
        raise BudgetExceededError("no")

    with pytest.raises(BudgetExceededError):
        await ledger.open_call(_call(NOW), [SpendScope(tenant_id="acme")], refuse)
    assert seen == [[Spend(calls=3, input_tokens=10, output_tokens=2, cost=0.5)]]  # counted itself

    assert (await ledger.spend(SpendScope(tenant_id="acme"))).calls == 2  # rolled back
    assert (
        await ledger.spend(SpendScope(tenant_id="acme", since=NOW - timedelta(hours=1)))
    ).calls == 1
    assert (await ledger.spend(SpendScope(tenant_id="acme", workflow="w"))).cost == 0.5
    assert (await ledger.spend(SpendScope(tenant_id="acme", execution_ids=("e2",)))).calls == 1
    assert await ledger.execution_spend("acme", "root") == Spend()
    assert await ledger.count_in_execution_spend(first) is True
    assert await ledger.count_in_execution_spend(first) is False
    assert await ledger.execution_spend("acme", "root") == Spend(
        calls=1, input_tokens=10, output_tokens=2, cost=0.5
    )
    assert second != first
