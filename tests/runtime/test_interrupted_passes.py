"""A pass that meets the database gone (a lost connection, a server restarting) is not the
run's failure: the tree is left to the recovery sweep, which continues it — the answer recorded
before the failure included — and the tool runs once (issue 24, finding 7)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from bot import ExecutionStatus
from bot.core.errors import RunInterruptedError
from bot.store.sql import SqlStore
from tests.conftest import MakeOffice
from tests.runtime.helpers import run, script_refund


def connection_lost() -> OperationalError:
    error = OperationalError("UPDATE cs_pauses ...", {}, ConnectionResetError("reset by peer"))
    error.connection_invalidated = True
    return error


async def test_an_answer_whose_pass_lost_the_database_is_continued_by_recovery(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    script_refund()
    office = await make_office()
    first = await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id
    take = SqlStore.take
    failures = [connection_lost()]

    async def failing_take(self: SqlStore, *args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return await take(self, *args, **kwargs)

    monkeypatch.setattr(SqlStore, "take", failing_take)

    with pytest.raises(RunInterruptedError) as raised:
        await office.app.resume(
            pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
        )
    assert isinstance(raised.value.__cause__, OperationalError)
    status = await office.app.get_result(first.execution_id, tenant_id="acme")
    assert status.status is not ExecutionStatus.FAILED  # left as it stood, for recovery
    assert office.ledger.runs == []

    await office.clock.advance(timedelta(seconds=15))  # past the lease, a sweep or two

    status = await office.app.get_result(first.execution_id, tenant_id="acme")
    assert status.status is ExecutionStatus.COMPLETED
    assert [name for name, _ in office.ledger.runs] == ["refund"]  # once


async def test_a_real_database_error_still_fails_the_run(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only an interruption is given back: a bad statement fails the run as before."""
    script_refund()
    office = await make_office()
    first = await run(office)
    pause_id = office.inbox.last("refund-card-tool").pause_id

    async def broken_take(self: SqlStore, *args: Any, **kwargs: Any) -> Any:
        raise IntegrityError("UPDATE cs_pauses ...", {}, ValueError("constraint"))

    monkeypatch.setattr(SqlStore, "take", broken_take)
    result = await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m"
    )
    assert result.status is ExecutionStatus.FAILED
    status = await office.app.get_result(first.execution_id, tenant_id="acme")
    assert status.status is ExecutionStatus.FAILED
