"""v11: why an execution failed keeps its code in a column of its own (``error_code``), beside
its sealed message; an execution that failed before v11 is read back as code and message too
(its ``error`` was ``"[code] message"``: no migration can open a sealed value to split it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Connection, insert, inspect

from bot.core.failures import ExecutionFailure
from bot.store.codec import JsonCodec
from bot.store.database import Database
from bot.store.migrations import MIGRATIONS, apply_migrations
from bot.store.sql import SqlStore
from bot.store.tables import executions, schema_version
from tests.databases import BACKENDS, database

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=7)


def _v10_with_failures(connection: Connection) -> None:
    """The schema as v10 left it (no ``error_code``), holding an execution that failed then
    and one that failed with a message in no known form."""
    apply_migrations(connection, schema_version, MIGRATIONS[:10], NOW)
    connection.exec_driver_sql(f"ALTER TABLE {executions.name} DROP COLUMN error_code")
    legacy = {
        "expired": "[pause.expired] nobody approved the call to refund-card-tool in time",
        "odd": "it broke [somewhere]",
    }
    for execution_id, error in legacy.items():
        connection.execute(
            insert(executions).values(
                execution_id=execution_id,
                root_execution_id=execution_id,
                thread_id="t",
                tenant_id="acme",
                owner_id="U1",
                workflow="w",
                status="FAILED",
                input=JsonCodec().encode({}),
                error=JsonCodec().encode(error),
                created_at=NOW,
                updated_at=NOW,
            )
        )


@pytest.mark.parametrize("backend", BACKENDS)
async def test_v11_adds_the_error_code_once_and_reads_earlier_failures(
    backend: str, tmp_path: Path
) -> None:
    async with database(backend, tmp_path) as url, Database.open(url) as opened:
        async with opened.engine.begin() as connection:
            await connection.run_sync(_v10_with_failures)
        assert await opened.migrate(LATER) == len(MIGRATIONS)
        assert await opened.migrate(LATER) == len(MIGRATIONS)  # idempotent
        async with opened.engine.connect() as connection:
            columns = await connection.run_sync(
                lambda c: {column["name"] for column in inspect(c).get_columns(executions.name)}
            )
        store = SqlStore(opened)
        expired, odd = await store.get("expired"), await store.get("odd")

    assert "error_code" in columns
    assert expired is not None and expired.error == ExecutionFailure(
        code="pause.expired",
        message="nobody approved the call to refund-card-tool in time",
    )
    assert odd is not None
    assert odd.error == ExecutionFailure(code="execution.failed", message="it broke [somewhere]")
