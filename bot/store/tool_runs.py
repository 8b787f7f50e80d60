"""``ToolRuns`` on a database: the ``cs_tool_runs`` table, one short statement per call.

A result is written through the store's payload codec (``EncryptingCodec`` in the App): a tool's
output may quote customer data, like every other payload we keep.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, delete, select, update

from bot.core.enums import ExecutionStatus
from bot.store.codec import JsonCodec, PayloadCodec
from bot.store.database import Database
from bot.store.records import NewToolRun, ToolRun
from bot.store.statements import insert_unless_present
from bot.store.tables import executions, tool_runs
from bot.store.transactions import Transactions

_START = insert_unless_present(
    tool_runs, "run_key", ("run_key", "tenant_id", "root_execution_id", "tool", "started_at")
)
_BY_KEY = select(tool_runs.c.result).where(tool_runs.c.run_key == bindparam("b_key"))
_FINISH = update(tool_runs).where(
    and_(tool_runs.c.run_key == bindparam("b_key"), tool_runs.c.result.is_(None))
)
_FORGET = delete(tool_runs).where(
    and_(tool_runs.c.run_key == bindparam("b_key"), tool_runs.c.result.is_(None))
)
_ENDED = [status.value for status in ExecutionStatus if status.ended]


class SqlToolRuns:
    """``ToolRuns`` on ``database``; results written with ``codec``."""

    def __init__(self, database: Database, codec: PayloadCodec | None = None) -> None:
        self._tx: Transactions = database.transactions
        self._codec: PayloadCodec = codec or JsonCodec()

    async def start(self, new: NewToolRun) -> ToolRun:
        values = {
            "run_key": new.run_key,
            "tenant_id": new.tenant_id,
            "root_execution_id": new.root_execution_id,
            "tool": new.tool,
            "started_at": new.at,
        }

        def body(connection: Connection) -> tuple[bool, str | None]:
            if connection.execute(_START, values).rowcount == 1:
                return True, None
            return False, connection.execute(_BY_KEY, {"b_key": new.run_key}).scalar_one()

        first, sealed = await self._tx.write(body)
        result = None if sealed is None else self._codec.decode(sealed)
        return ToolRun(run_key=new.run_key, first=first, result=result)

    async def finish(self, run_key: str, result: dict[str, Any], at: datetime) -> None:
        values = {"b_key": run_key, "result": self._codec.encode(result), "finished_at": at}
        await self._tx.apply(lambda connection: connection.execute(_FINISH, values))

    async def forget(self, run_key: str) -> None:
        await self._tx.apply(lambda connection: connection.execute(_FORGET, {"b_key": run_key}))

    async def delete_of_trees_ended_before(self, cutoff: datetime) -> int:
        ended = select(executions.c.execution_id).where(
            and_(executions.c.status.in_(_ENDED), executions.c.updated_at < cutoff)
        )
        statement = delete(tool_runs).where(tool_runs.c.root_execution_id.in_(ended))
        return await self._tx.write(lambda connection: connection.execute(statement).rowcount)
