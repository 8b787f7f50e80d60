"""The ledger of model calls (table ``cs_model_calls``): what budgets and an execution's spend read.

A call is written before it is made, inside the transaction that checks the budgets (so on SQLite,
where writers take turns, two concurrent calls never both pass a limit of one; on PostgreSQL the
check is exact per call and soft under concurrent calls of one scope). Its tokens and cost are
filled in when the model answered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, false, func, insert, select, true, update

from bot.core.budget import Spend
from bot.store.database import Database
from bot.store.tables import model_calls
from bot.store.transactions import Transactions


@dataclass(frozen=True, slots=True, kw_only=True)
class NewModelCall:
    """A model call about to be made, traced under its execution and its caller."""

    tenant_id: str
    root_execution_id: str
    execution_id: str
    workflow: str
    caller: str  # e.g. "reply-interpreter:refund-reply-interpreter"
    model: str
    pause_key: str | None
    at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class SpendScope:
    """Which calls count: always one tenant's, narrowed by whatever else is given."""

    tenant_id: str
    since: datetime | None = None
    workflow: str | None = None
    root_execution_id: str | None = None
    execution_ids: tuple[str, ...] | None = None
    in_execution_spend: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCallRow:
    id: int
    tenant_id: str
    root_execution_id: str
    execution_id: str
    workflow: str
    caller: str
    model: str
    input_tokens: int
    output_tokens: int
    cost: float
    pause_key: str | None
    in_execution_spend: bool
    at: datetime


Admit = Callable[[list[Spend]], None]
"""Raises to refuse the call: it gets the spend of each scope, the new call counted."""


class SqlLedger:
    """The ledger on the database's transactions (on a SQLite file: a worker thread)."""

    def __init__(self, database: Database) -> None:
        self._tx: Transactions = database.transactions

    async def open_call(
        self, call: NewModelCall, scopes: Sequence[SpendScope], admit: Admit
    ) -> int:
        """Count ``call`` and check it: ``admit`` raising rolls the call back out of the ledger
        (it runs inside the transaction: a plain function, no I/O)."""
        values = {
            "tenant_id": call.tenant_id,
            "root_execution_id": call.root_execution_id,
            "execution_id": call.execution_id,
            "workflow": call.workflow,
            "caller": call.caller,
            "model": call.model,
            "input_tokens": 0,
            "output_tokens": 0,
            "cost": 0.0,
            "pause_key": call.pause_key,
            "in_execution_spend": False,
            "at": call.at,
        }

        def body(connection: Connection) -> int:
            result = connection.execute(insert(model_calls).values(**values))
            admit([_spend(connection, scope) for scope in scopes])
            key = result.inserted_primary_key
            return int(key[0]) if key is not None else 0

        return await self._tx.write(body)

    async def settle_call(
        self, call_id: int, *, input_tokens: int, output_tokens: int, cost: float
    ) -> None:
        """The tokens and the cost of a call, once the model answered."""
        statement = (
            update(model_calls)
            .where(model_calls.c.id == call_id)
            .values(input_tokens=input_tokens, output_tokens=output_tokens, cost=cost)
        )
        await self._tx.apply(lambda connection: connection.execute(statement))

    async def count_in_execution_spend(self, call_id: int) -> bool:
        """Add a call to its execution's spend; False if it was already counted there."""
        statement = (
            update(model_calls)
            .where(and_(model_calls.c.id == call_id, model_calls.c.in_execution_spend.is_(false())))
            .values(in_execution_spend=True)
        )
        return await self._tx.apply(lambda connection: connection.execute(statement).rowcount == 1)

    async def spend(self, scope: SpendScope) -> Spend:
        return await self._tx.read(lambda connection: _spend(connection, scope))

    async def execution_spend(self, tenant_id: str, root_execution_id: str) -> Spend:
        """What the tree's steps took: the calls whose answers were taken, each once."""
        return await self.spend(
            SpendScope(
                tenant_id=tenant_id, root_execution_id=root_execution_id, in_execution_spend=True
            )
        )

    async def calls(self, tenant_id: str, root_execution_id: str) -> list[ModelCallRow]:
        """Every call traced under an execution tree, oldest first."""
        statement = (
            select(model_calls)
            .where(_where(SpendScope(tenant_id=tenant_id, root_execution_id=root_execution_id)))
            .order_by(model_calls.c.id)
        )
        rows = await self._tx.read(lambda connection: connection.execute(statement).all())
        return [_call_row(row._mapping) for row in rows]


def _call_row(m: Any) -> ModelCallRow:
    return ModelCallRow(
        id=m["id"],
        tenant_id=m["tenant_id"],
        root_execution_id=m["root_execution_id"],
        execution_id=m["execution_id"],
        workflow=m["workflow"],
        caller=m["caller"],
        model=m["model"],
        input_tokens=m["input_tokens"],
        output_tokens=m["output_tokens"],
        cost=m["cost"],
        pause_key=m["pause_key"],
        in_execution_spend=bool(m["in_execution_spend"]),
        at=m["at"],
    )


def _spend(connection: Connection, scope: SpendScope) -> Spend:
    row = connection.execute(
        select(
            func.count(model_calls.c.id),
            func.coalesce(func.sum(model_calls.c.input_tokens), 0),
            func.coalesce(func.sum(model_calls.c.output_tokens), 0),
            func.coalesce(func.sum(model_calls.c.cost), 0.0),
        ).where(_where(scope))
    ).one()
    return Spend(
        calls=int(row[0]),
        input_tokens=int(row[1]),
        output_tokens=int(row[2]),
        cost=float(row[3]),
    )


def _where(scope: SpendScope) -> Any:
    conditions: list[Any] = [model_calls.c.tenant_id == scope.tenant_id]
    if scope.since is not None:
        conditions.append(model_calls.c.at > scope.since)
    if scope.workflow is not None:
        conditions.append(model_calls.c.workflow == scope.workflow)
    if scope.root_execution_id is not None:
        conditions.append(model_calls.c.root_execution_id == scope.root_execution_id)
    if scope.execution_ids is not None:
        conditions.append(model_calls.c.execution_id.in_(scope.execution_ids))
    if scope.in_execution_spend is not None:
        flag = model_calls.c.in_execution_spend
        conditions.append(flag.is_(true() if scope.in_execution_spend else false()))
    return and_(*conditions)
