"""The one Database: its URL parsed once (never shown with its password), closed once."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.core.budget import Spend
from bot.store.database import Database, DatabaseUrl, DatabaseUrlError, database_url_problem
from bot.store.ledger import NewModelCall, SpendScope, SqlLedger

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SECRET_URL = "postgresql+asyncpg://alice:s3cret@db.example:6543/countersign?sslmode=require"


def test_a_url_is_shown_without_its_password() -> None:
    url = DatabaseUrl.parse(SECRET_URL)
    assert "s3cret" not in repr(url) and "s3cret" not in url.shown
    assert "s3cret" not in repr(Database.open(url))


def test_a_postgresql_url_reaches_libpq_as_keywords() -> None:
    assert DatabaseUrl.parse(SECRET_URL).libpq_parameters() == {
        "host": "db.example",
        "port": 6543,
        "user": "alice",
        "password": "s3cret",
        "dbname": "countersign",
        "sslmode": "require",
    }


def test_where_a_sqlite_database_is(tmp_path: Path) -> None:
    file = DatabaseUrl.parse(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}")
    assert file.is_sqlite and file.sqlite_path == tmp_path / "x.db" and not file.in_memory
    memory = DatabaseUrl.parse("sqlite+aiosqlite:///:memory:")
    assert memory.is_sqlite and memory.sqlite_path is None and memory.in_memory
    assert DatabaseUrl.sqlite_file(tmp_path / "y.db").sqlite_path == tmp_path / "y.db"
    postgres = DatabaseUrl.parse(SECRET_URL)
    assert not postgres.is_sqlite and postgres.sqlite_path is None and not postgres.in_memory


def test_an_unusable_url_says_what_to_write() -> None:
    with pytest.raises(DatabaseUrlError, match="not a database URL"):
        DatabaseUrl.parse("::nonsense")
    with pytest.raises(DatabaseUrlError, match="write postgresql\\+asyncpg://"):
        DatabaseUrl.checked("postgresql://u@h/d")
    assert database_url_problem("mysql+aiomysql://u@h/d") is not None
    assert database_url_problem(SECRET_URL) is None


async def test_close_is_repeatable_and_async_with_closes(tmp_path: Path) -> None:
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        assert await database.migrate(NOW) >= 1
        assert not await database.holds_rows()
    await database.close()  # again: nothing happens


async def test_the_ledger_runs_on_the_databases_worker_threads(tmp_path: Path) -> None:
    """On a SQLite file the ledger's transaction runs in a worker thread, never on the loop."""
    seen: list[threading.Thread] = []

    def admit(spends: list[Spend]) -> None:
        seen.append(threading.current_thread())
        assert spends[0].calls == 1  # the new call is counted in its own transaction

    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        await database.migrate(NOW)
        ledger = SqlLedger(database)
        call = NewModelCall(
            tenant_id="acme",
            root_execution_id="r",
            execution_id="e",
            workflow="w",
            caller="c",
            model="m",
            pause_key=None,
            at=NOW,
        )
        await ledger.open_call(call, [SpendScope(tenant_id="acme")], admit)
    assert seen and seen[0] is not threading.current_thread()
