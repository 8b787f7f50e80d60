"""Which budgets a model call made for a pause is checked against, and the check itself.

The tree's budgets: the application's (the tenant's calls) and the budget of the workflow of the
pause's execution and of every execution above it (see ``bot.core.budget`` for the scopes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.core.budget import Budget, Spend
from bot.core.errors import BudgetExceededError
from bot.runtime.assembly import Assembly
from bot.store.ledger import SpendScope
from bot.store.records import ExecutionRow


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetCheck:
    owner: str  # "application office", "workflow refund-workflow"
    budget: Budget
    scope: SpendScope


def lineage(rows: Sequence[ExecutionRow], execution_id: str) -> list[ExecutionRow]:
    """The execution and the executions above it, up to the root (the execution first)."""
    by_id = {row.execution_id: row for row in rows}
    chain: list[ExecutionRow] = []
    current = by_id.get(execution_id)
    while current is not None and current not in chain:
        chain.append(current)
        parent = current.parent_execution_id
        current = by_id.get(parent) if parent is not None else None
    return chain


def _subtree(rows: Sequence[ExecutionRow], top: ExecutionRow) -> tuple[str, ...]:
    ids = [top.execution_id]
    for execution_id in ids:  # grows while it is walked: breadth first
        ids.extend(r.execution_id for r in rows if r.parent_execution_id == execution_id)
    return tuple(ids)


def budget_checks(
    assembly: Assembly, tree: Sequence[ExecutionRow], execution_id: str, now: datetime
) -> list[BudgetCheck]:
    """The budgets a call made in ``execution_id`` of ``tree`` (all its rows) is checked against."""
    chain = lineage(tree, execution_id)
    if not chain:
        return []
    tenant_id = chain[0].tenant_id
    checks: list[BudgetCheck] = []
    application = assembly.application
    if isinstance(application.budget, Budget):
        budget = application.budget
        since = now - budget.window if budget.window is not None else None
        scope = SpendScope(tenant_id=tenant_id, since=since)
        checks.append(
            BudgetCheck(owner=f"application {application.name}", budget=budget, scope=scope)
        )
    workflows = {spec.name: spec for spec in assembly.workflows.values()}
    for row in chain:
        spec = workflows.get(row.workflow)
        if spec is None or not isinstance(spec.budget, Budget):
            continue
        budget = spec.budget
        if budget.window is not None:
            scope = SpendScope(tenant_id=tenant_id, since=now - budget.window, workflow=spec.name)
        elif row.parent_execution_id is None:
            scope = SpendScope(tenant_id=tenant_id, root_execution_id=row.root_execution_id)
        else:
            scope = SpendScope(
                tenant_id=tenant_id,
                root_execution_id=row.root_execution_id,
                execution_ids=_subtree(tree, row),
            )
        checks.append(BudgetCheck(owner=f"workflow {spec.name}", budget=budget, scope=scope))
    return checks


def refuse_exhausted(checks: Sequence[BudgetCheck], spends: Sequence[Spend]) -> None:
    """``BudgetExceededError`` for the first budget the call would break."""
    for check, spend in zip(checks, spends, strict=True):
        if spend.exhausts(check.budget):
            raise BudgetExceededError(_message(check, spend))


def _message(check: BudgetCheck, spend: Spend) -> str:
    budget = check.budget
    per = f"in the last {budget.window}" if budget.window is not None else _lifetime(check)
    if budget.max_calls is not None and spend.calls > budget.max_calls:
        used = f"{spend.calls - 1} of {budget.max_calls} model calls"
    else:
        used = f"a cost of {spend.cost:g} of {budget.max_cost or 0:g}"
    return (
        f"the budget of the {check.owner} is exhausted ({used} {per}, tenant "
        f"{check.scope.tenant_id}): the model was not called and the pause still waits; "
        "answer with a decision, or raise the budget"
    )


def _lifetime(check: BudgetCheck) -> str:
    return "for this execution" if check.scope.root_execution_id is not None else "so far"
