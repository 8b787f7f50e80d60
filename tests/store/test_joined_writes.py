"""Short writes of requests being answered (``calls_ahead``) made in one turn of the loop are
committed together, each body undone alone.

A burst of Slack clicks records fifty answers in one turn of the loop, each a short write
before its ack; committed one by one, the commits were a fifth of the burst's time on the loop
(``ThreadedSqliteTransactions._commit_joined``).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Connection, insert

from bot.store.database import Database
from bot.store.tables import leases
from bot.store.transactions import calls_ahead
from tests.store.test_short_calls import NOW, _lease, _roots, database

__all__ = ["database"]  # the fixture, shared with the short calls' tests


def _committed(path: Path) -> list[str]:
    """What another connection sees: only what was committed."""
    other = sqlite3.connect(path)
    try:
        return sorted(root for (root,) in other.execute("SELECT root_execution_id FROM cs_leases"))
    finally:
        other.close()


def _inserting(root: str, path: Path, seen: list[list[str]]) -> Callable[[Connection], None]:
    """A write of ``root``'s lease that notes what was committed when it ran."""

    def body(connection: Connection) -> None:
        connection.execute(insert(leases), _lease(root))
        seen.append(_committed(path))

    return body


async def test_short_writes_of_one_turn_are_one_commit_and_a_failing_body_is_undone_alone(
    database: Database, tmp_path: Path
) -> None:
    tx = database.transactions
    seen: list[list[str]] = []
    path = tmp_path / "x.db"

    def half_then_fail(connection: Connection) -> None:
        connection.execute(insert(leases), _lease("b"))
        raise RuntimeError("stop")

    with calls_ahead():  # requests waiting for their answer (a Slack click's, before its ack)
        outcomes = await asyncio.gather(
            tx.write(_inserting("a", path, seen), short=True),
            tx.write(half_then_fail, short=True),
            tx.apply(_inserting("c", path, seen), short=True),
            return_exceptions=True,
        )

    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], RuntimeError)
    assert seen == [[], []]  # "a" not committed yet when "c" was written: one transaction
    assert _committed(tmp_path / "x.db") == ["a", "c"]  # "b" undone alone, the rest committed
    assert await tx.read(_roots, short=True) == ["a", "c"]  # the loop's connection serves on


async def test_a_short_write_joined_before_close_is_committed(tmp_path: Path) -> None:
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        await database.migrate(NOW)
        tx = database.transactions
        with calls_ahead():
            writing = asyncio.ensure_future(
                tx.write(lambda c: c.execute(insert(leases), _lease("a")), short=True)
            )
        await asyncio.sleep(0)  # the write joined this turn's: close comes before its commit
        await tx.close()
        await writing
    assert _committed(tmp_path / "x.db") == ["a"]


async def test_other_short_writes_run_at_once(database: Database, tmp_path: Path) -> None:
    """A run's writes are not joined: each would wait for the end of a turn of the loop."""
    tx = database.transactions
    seen: list[list[str]] = []
    path = tmp_path / "x.db"

    await asyncio.gather(
        tx.write(_inserting("a", path, seen), short=True),
        tx.write(_inserting("c", path, seen), short=True),
    )
    assert seen == [[], ["a"]]  # "a" committed before "c" was written
