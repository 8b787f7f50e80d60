"""The hot writes run on SQLite's cursor (``bot.store.direct``) store exactly what SQLAlchemy
would, in the caller's transaction, with SQLAlchemy's errors, and go SQLAlchemy's way when it
is watched."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Connection,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    case,
    create_engine,
    event,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError, MultipleResultsFound

from bot.store import direct
from bot.store.database import Database
from bot.store.statements import (
    EXECUTION,
    INSERT_AUDIT_ENTRY,
    INSERT_EXECUTION_UNLESS_PRESENT,
    NEW_EXECUTION_COLUMNS,
    UPDATE_EXECUTION,
    UPDATE_PAUSED_EXECUTION,
    insert_unless_present,
)
from bot.store.tables import UtcDateTime, executions, leases, metadata, pause_answers
from tests.databases import postgres_database

NOW = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
shapes = Table(
    "shapes",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("name", String, nullable=False, unique=True),
    Column("at", UtcDateTime),
    Column("flag", Boolean, nullable=False),
    Column("state", String, nullable=False),
    Column("doc", JSON),
)
INSERT_SHAPE = insert(shapes)
INSERT_LEASE = insert(leases)
SET_SHAPE = update(shapes).where(shapes.c.name == bindparam("b_name"), shapes.c.state == "new")


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    metadata.create_all(engine)
    shapes.create(engine)
    yield engine
    engine.dispose()


def counting_sqlalchemy_executions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements run through ``Connection.execute`` from now on."""
    seen: list[str] = []
    original = Connection.execute

    def execute(self: Connection, statement: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(statement).split()[0])
        return original(self, statement, *args, **kwargs)

    monkeypatch.setattr(Connection, "execute", execute)
    return seen


def stored(engine: Engine, table: str, key: str, value: str) -> dict[str, Any]:
    """The row as SQLite holds it (text, integers), not as SQLAlchemy would read it back,
    without its ids."""
    with engine.connect() as connection:
        row = connection.exec_driver_sql(f"SELECT * FROM {table} WHERE {key} = ?", (value,)).one()
    ids = ("id", "name", "execution_id", "root_execution_id")
    return {name: v for name, v in row._mapping.items() if name not in ids}


def execution(execution_id: str) -> dict[str, Any]:
    return {
        "execution_id": execution_id,
        "root_execution_id": execution_id,
        "parent_execution_id": None,
        "thread_id": "th",
        "tenant_id": "t",
        "owner_id": "o",
        "workflow": "w",
        "status": "running",
        "input": '{"a": 1}',
        "created_at": NOW,
        "updated_at": NOW,
    }


def test_it_stores_what_sqlalchemy_stores(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    later = {"status": "paused", "updated_at": NOW + timedelta(seconds=1), "told_at": NOW}
    with engine.begin() as connection:
        connection.execute(INSERT_EXECUTION_UNLESS_PRESENT, execution("a"))
        connection.execute(UPDATE_EXECUTION, {"b_execution_id": "a", **later})
        connection.execute(
            INSERT_SHAPE, {"name": "a", "at": NOW, "flag": False, "doc": {"k": 1}, "state": "new"}
        )
        connection.execute(
            SET_SHAPE, {"b_name": "a", "doc": [1, "x"], "flag": True, "state": "done"}
        )
    through_sqlalchemy = counting_sqlalchemy_executions(monkeypatch)
    with engine.begin() as connection:
        assert direct.execute(connection, INSERT_EXECUTION_UNLESS_PRESENT, execution("b")) == 1
        assert direct.execute(connection, UPDATE_EXECUTION, {"b_execution_id": "b", **later}) == 1
        shape = {"name": "b", "at": NOW, "flag": False, "doc": {"k": 1}, "state": "new"}
        assert direct.execute(connection, INSERT_SHAPE, shape) == 1
        assert direct.execute(
            connection, SET_SHAPE, {"b_name": "b", "doc": [1, "x"], "flag": True, "state": "done"}
        )
        # the value bound in the statement itself (state = 'new') is applied: no longer matches
        assert (
            direct.execute(connection, SET_SHAPE, {"b_name": "b", "doc": None, "flag": True}) == 0
        )

    assert through_sqlalchemy == []  # each went to sqlite3's cursor
    assert stored(engine, "cs_executions", "execution_id", "b") == stored(
        engine, "cs_executions", "execution_id", "a"
    )
    assert stored(engine, "shapes", "name", "b") == stored(engine, "shapes", "name", "a")


def test_several_parameter_sets_are_one_executemany(engine: Engine) -> None:
    rows = [{"name": n, "at": NOW, "flag": False, "doc": None, "state": "new"} for n in ("b", "c")]
    with engine.begin() as connection:
        connection.execute(INSERT_SHAPE, {**rows[0], "name": "a"})
        assert direct.execute(connection, INSERT_SHAPE, rows) == 2
        assert direct.execute(connection, INSERT_SHAPE, []) == 0
    for name in ("b", "c"):
        assert stored(engine, "shapes", "name", name) == stored(engine, "shapes", "name", "a")


def test_statements_built_per_call_cannot_grow_its_cache_without_bound(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(direct, "MAX_PREPARED", len(direct._prepared) + 1)
    rows = [{"name": n, "at": NOW, "flag": False, "doc": None, "state": "new"} for n in "abc"]
    before = len(direct._prepared)
    with engine.begin() as connection:
        for row in rows:  # a new statement each time: the first is prepared, the rest are not
            assert direct.execute(connection, insert(shapes), row) == 1
    assert len(direct._prepared) == before + 1
    assert [stored(engine, "shapes", "name", n)["state"] for n in "abc"] == ["new"] * 3


def test_it_writes_in_the_callers_transaction(engine: Engine) -> None:
    with engine.connect() as connection:
        with connection.begin() as transaction:
            direct.execute(connection, INSERT_EXECUTION_UNLESS_PRESENT, execution("a"))
            transaction.rollback()
        with connection.begin():
            assert connection.exec_driver_sql("SELECT count(*) FROM cs_executions").scalar() == 0


def test_a_driver_error_is_sqlalchemys(engine: Engine) -> None:
    row = {"name": "a", "at": None, "flag": False, "doc": None, "state": "new"}
    with engine.begin() as connection:
        direct.execute(connection, INSERT_SHAPE, row)
    with engine.begin() as connection, pytest.raises(IntegrityError):
        direct.execute(connection, INSERT_SHAPE, row)  # the name is unique


def test_a_watched_engine_sees_every_statement(engine: Engine) -> None:
    seen: list[str] = []

    def before(*args: Any) -> None:
        seen.append(args[2])

    event.listen(engine, "before_cursor_execute", before)
    with engine.begin() as connection:
        direct.execute(connection, INSERT_EXECUTION_UNLESS_PRESENT, execution("a"))
        direct.execute(connection, UPDATE_EXECUTION, {"b_execution_id": "a", "status": "paused"})
    assert [s.split()[0] for s in seen] == ["INSERT", "UPDATE"]


@pytest.mark.postgres
async def test_on_postgresql_it_stores_what_sqlalchemy_stores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    later = {"status": "paused", "updated_at": NOW + timedelta(seconds=1), "told_at": NOW}
    lease = {"root_execution_id": "a", "owner": "o", "acquired_at": NOW, "expires_at": NOW}

    def ordinary(connection: Connection) -> None:
        connection.execute(INSERT_EXECUTION_UNLESS_PRESENT, execution("a"))
        connection.execute(UPDATE_EXECUTION, {"b_execution_id": "a", **later})

    def directly(connection: Connection) -> list[int]:
        return [
            direct.execute(connection, INSERT_EXECUTION_UNLESS_PRESENT, execution("b")),
            direct.execute(connection, INSERT_EXECUTION_UNLESS_PRESENT, execution("b")),
            direct.execute(connection, UPDATE_EXECUTION, {"b_execution_id": "b", **later}),
            direct.execute(connection, INSERT_LEASE, lease),
        ]

    def row(execution_id: str) -> Callable[[Connection], dict[str, Any]]:
        def body(connection: Connection) -> dict[str, Any]:
            found = connection.execute(EXECUTION, {"b_execution_id": execution_id}).one()
            ids = ("execution_id", "root_execution_id")
            return {name: v for name, v in found._mapping.items() if name not in ids}

        return body

    async with postgres_database() as url, Database.open(url) as database:
        await database.migrate(NOW)
        await database.transactions.write(ordinary)
        through_sqlalchemy = counting_sqlalchemy_executions(monkeypatch)
        assert await database.transactions.write(directly) == [1, 0, 1, 1]
        assert through_sqlalchemy == []  # each went to the asyncpg adapter's cursor
        assert await database.transactions.read(row("b")) == await database.transactions.read(
            row("a")
        )
        with pytest.raises(IntegrityError):  # the lease's root is its key
            await database.transactions.write(
                lambda connection: direct.execute(connection, INSERT_LEASE, lease)
            )
        # the failed transaction was rolled back, the connection serves the next one
        assert (
            await database.transactions.apply(
                lambda connection: direct.execute(
                    connection, UPDATE_EXECUTION, {"b_execution_id": "b", "status": "done"}
                )
            )
            == 1
        )


# ---------------------------------------------------------------- statements that return rows

INSERT_SHAPE_RETURNING = insert(shapes).returning(shapes)
SHAPE_BY_NAME = select(shapes).where(shapes.c.name == bindparam("b_name"))
SET_SHAPE_RETURNING = (
    update(shapes).where(shapes.c.name == bindparam("b_name")).returning(shapes.c.flag, shapes.c.at)
)
SHAPES_IN_ORDER = select(shapes).order_by(shapes.c.name)
INSERT_EXECUTION_RETURNING = insert_unless_present(
    executions, "execution_id", NEW_EXECUTION_COLUMNS, returning=True
)


def read(rows: Sequence[Any]) -> list[list[tuple[str, Any, type]]]:
    """Each row as (name, value, type of value): equal only if read alike, to the type."""
    return [[(k, v, type(v)) for k, v in row._mapping.items()] for row in rows]


def test_rows_read_directly_are_sqlalchemys(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = {"name": "a", "at": NOW, "flag": True, "doc": {"k": [1, "x"]}, "state": "new"}
    with engine.begin() as connection:
        by_sqlalchemy = [
            connection.execute(INSERT_SHAPE_RETURNING, shape).all(),
            connection.execute(INSERT_EXECUTION_RETURNING, execution("x")).all(),
            connection.execute(SHAPE_BY_NAME, {"b_name": "a"}).all(),
            connection.execute(SET_SHAPE_RETURNING, {"b_name": "a", "flag": False}).all(),
            connection.execute(SHAPES_IN_ORDER, {}).all(),
            connection.execute(EXECUTION, {"b_execution_id": "x"}).all(),
        ]
        connection.rollback()
    through_sqlalchemy = counting_sqlalchemy_executions(monkeypatch)
    with engine.begin() as connection:
        directly = [
            direct.rows(connection, INSERT_SHAPE_RETURNING, shape),
            direct.rows(connection, INSERT_EXECUTION_RETURNING, execution("x")),
            direct.rows(connection, SHAPE_BY_NAME, {"b_name": "a"}),
            direct.rows(connection, SET_SHAPE_RETURNING, {"b_name": "a", "flag": False}),
            direct.rows(connection, SHAPES_IN_ORDER, {}),
            direct.rows(connection, EXECUTION, {"b_execution_id": "x"}),
        ]
        # read again: the second time through the reader kept from the first
        assert read(direct.rows(connection, SHAPE_BY_NAME, {"b_name": "a"})) == read(directly[4])
    assert through_sqlalchemy == []  # each went to sqlite3's cursor
    assert [read(r) for r in directly] == [read(r) for r in by_sqlalchemy]
    assert directly[0][0]._mapping["at"] == NOW  # an aware datetime, as written
    assert directly[3][0]._mapping["flag"] is False


def test_first_and_one_or_none_are_sqlalchemys(engine: Engine) -> None:
    two = [{"name": n, "at": None, "flag": False, "doc": None, "state": "new"} for n in "ab"]
    with engine.begin() as connection:
        connection.execute(INSERT_SHAPE, two)
        assert direct.first(connection, SHAPE_BY_NAME, {"b_name": "z"}) is None
        assert direct.one_or_none(connection, SHAPE_BY_NAME, {"b_name": "z"}) is None
        found = direct.one_or_none(connection, SHAPE_BY_NAME, {"b_name": "b"})
        assert found is not None and found._mapping["name"] == "b"
        first = direct.first(connection, SHAPES_IN_ORDER, {})
        assert first is not None and first._mapping["name"] == "a"
        with pytest.raises(MultipleResultsFound):
            direct.one_or_none(connection, SHAPES_IN_ORDER, {})


def test_rows_are_read_in_the_callers_transaction_with_sqlalchemys_errors(engine: Engine) -> None:
    shape = {"name": "a", "at": None, "flag": False, "doc": None, "state": "new"}
    with engine.connect() as connection:
        with connection.begin() as transaction:
            assert len(direct.rows(connection, INSERT_SHAPE_RETURNING, shape)) == 1
            transaction.rollback()
        with connection.begin():
            assert direct.rows(connection, SHAPES_IN_ORDER, {}) == []
            direct.rows(connection, INSERT_SHAPE_RETURNING, shape)
        with connection.begin(), pytest.raises(IntegrityError):
            direct.rows(connection, INSERT_SHAPE_RETURNING, shape)  # the name is unique


def test_a_watched_engine_sees_every_read(engine: Engine) -> None:
    seen: list[str] = []

    def before(*args: Any) -> None:
        seen.append(args[2])

    event.listen(engine, "before_cursor_execute", before)
    with engine.begin() as connection:
        direct.rows(connection, INSERT_EXECUTION_RETURNING, execution("a"))
        row = direct.first(connection, EXECUTION, {"b_execution_id": "a"})
    assert [s.split()[0] for s in seen] == ["INSERT", "SELECT"]
    assert row is not None and row._mapping["created_at"] == NOW


@pytest.mark.postgres
async def test_on_postgresql_rows_read_directly_are_sqlalchemys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def reads(connection: Connection, run: Callable[..., Any]) -> list[Any]:
        return [
            read(run(connection, INSERT_EXECUTION_RETURNING, execution("x"))),
            read(run(connection, INSERT_EXECUTION_RETURNING, execution("x"))),  # none: present
            read(run(connection, EXECUTION, {"b_execution_id": "x"})),
            read(
                run(
                    connection,
                    UPDATE_PAUSED_EXECUTION,
                    {"b_execution_id": "x", "status": "running", "updated_at": NOW},
                )
            ),
        ]

    def ordinary(connection: Connection) -> list[Any]:
        found = reads(connection, lambda c, s, p: c.execute(s, p).all())
        connection.rollback()
        return found

    def directly(connection: Connection) -> list[Any]:
        return reads(connection, direct.rows)

    async with postgres_database() as url, Database.open(url) as database:
        await database.migrate(NOW)
        by_sqlalchemy = await database.transactions.write(ordinary)
        through_sqlalchemy = counting_sqlalchemy_executions(monkeypatch)
        assert await database.transactions.write(directly) == by_sqlalchemy
        assert through_sqlalchemy == []  # each went to the asyncpg adapter's cursor
        assert ("created_at", NOW, datetime) in by_sqlalchemy[0][0]


SET_STATE_RETURNING = (
    update(shapes)
    .where(shapes.c.name == bindparam("b_name"))
    .values(state=case((shapes.c.state == "new", bindparam("b_state")), else_=shapes.c.state))
    .returning(shapes)
)
"""A SET computed in SQL (SQLAlchemy lists the column as fetched after): its rows are read."""


def test_a_set_computed_in_sql_returns_sqlalchemys_rows(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = {"name": "a", "at": NOW, "flag": True, "doc": None, "state": "new"}
    with engine.begin() as connection:
        connection.execute(INSERT_SHAPE, shape)
    with engine.begin() as connection:
        by_sqlalchemy = connection.execute(
            SET_STATE_RETURNING, {"b_name": "a", "b_state": "done"}
        ).all()
        connection.rollback()
    through_sqlalchemy = counting_sqlalchemy_executions(monkeypatch)
    with engine.begin() as connection:
        directly = direct.rows(connection, SET_STATE_RETURNING, {"b_name": "a", "b_state": "done"})
        again = direct.rows(connection, SET_STATE_RETURNING, {"b_name": "a", "b_state": "x"})
    assert through_sqlalchemy == []
    assert read(directly) == read(by_sqlalchemy)
    assert directly[0]._mapping["state"] == "done"
    assert again[0]._mapping["state"] == "done"  # no longer new: the SET kept it


def test_an_engine_with_an_isolation_level_is_not_watched(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``execution_options(isolation_level=...)`` (PostgreSQL's autocommit calls) gives the
    engine a listener of its own, for each new connection: no reason to go SQLAlchemy's way;
    a listener of statements on it still is one."""
    autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
    through_sqlalchemy = counting_sqlalchemy_executions(monkeypatch)
    with autocommit.connect() as connection:
        direct.execute(connection, INSERT_EXECUTION_UNLESS_PRESENT, execution("a"))
        assert direct.first(connection, EXECUTION, {"b_execution_id": "a"}) is not None
    assert through_sqlalchemy == []
    seen: list[str] = []
    event.listen(autocommit, "before_cursor_execute", lambda *args: seen.append(args[2]))
    with autocommit.connect() as connection:
        direct.first(connection, EXECUTION, {"b_execution_id": "a"})
    assert through_sqlalchemy == ["SELECT"]
    assert [s.split()[0] for s in seen] == ["SELECT"]


@pytest.mark.postgres
async def test_on_postgresql_autocommit_calls_go_to_the_cursor_directly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``apply`` and ``read`` run in autocommit there: their statements go direct too."""
    async with postgres_database() as url, Database.open(url) as database:
        await database.migrate(NOW)
        through_sqlalchemy = counting_sqlalchemy_executions(monkeypatch)
        assert (
            await database.transactions.apply(
                lambda c: direct.execute(c, INSERT_EXECUTION_UNLESS_PRESENT, execution("a"))
            )
            == 1
        )
        found = await database.transactions.read(
            lambda c: direct.first(c, EXECUTION, {"b_execution_id": "a"})
        )
        assert through_sqlalchemy == []
        assert found is not None and found._mapping["created_at"] == NOW


@pytest.mark.postgres
async def test_on_postgresql_an_insert_with_a_generated_key_goes_direct(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SQLAlchemy adds ``RETURNING`` the new key to a one-row insert there (for
    ``inserted_primary_key``); a direct write needs only its row count, and stores the same."""
    values = {
        "tenant_id": "t",
        "root_execution_id": "r",
        "execution_id": "e",
        "pause_id": "p",
        "step": "{}",
        "role": "r",
        "answered_by": "requester",
        "resolution": "approved",
        "asked_at": NOW,
        "resolved_at": NOW,
        "pause_seq": 1,
    }

    def stored_row(key: str) -> Callable[[Connection], dict[str, Any]]:
        def body(connection: Connection) -> dict[str, Any]:
            row = connection.execute(
                select(pause_answers).where(pause_answers.c.idempotency_key == key)
            ).one()
            return {k: v for k, v in row._mapping.items() if k not in ("id", "idempotency_key")}

        return body

    async with postgres_database() as url, Database.open(url) as database:
        await database.migrate(NOW)
        await database.transactions.write(
            lambda c: c.execute(INSERT_AUDIT_ENTRY, {**values, "idempotency_key": "a"})
        )
        through_sqlalchemy = counting_sqlalchemy_executions(monkeypatch)
        assert (
            await database.transactions.write(
                lambda c: direct.execute(c, INSERT_AUDIT_ENTRY, {**values, "idempotency_key": "b"})
            )
            == 1
        )
        assert through_sqlalchemy == []
        monkeypatch.undo()
        assert await database.transactions.read(stored_row("b")) == (
            await database.transactions.read(stored_row("a"))
        )


@pytest.mark.postgres
async def test_on_postgresql_statements_go_to_asyncpg_itself_or_the_cursor_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The installed SQLAlchemy's asyncpg adapter has every private part ``direct`` uses (a
    release without one fails here, not in production); an adapter missing one runs the
    statement on its cursor, with the same rows."""

    def read_back(connection: Connection) -> tuple[bool, Any]:
        found = direct.first(connection, EXECUTION, {"b_execution_id": "a"})
        return direct._on_asyncpg_itself(connection), None if found is None else found._mapping

    async with postgres_database() as url, Database.open(url) as database:
        await database.migrate(NOW)
        await database.transactions.write(
            lambda c: direct.execute(c, INSERT_EXECUTION_UNLESS_PRESENT, execution("a"))
        )
        itself, by_asyncpg = await database.transactions.read(read_back)
        assert itself is True
        cursors: list[object] = []

        def counted(adapter: Any) -> Any:
            cursors.append(adapter)
            return made(adapter)

        monkeypatch.setattr(direct, "_ADAPTER_PARTS", (*direct._ADAPTER_PARTS, "_not_there"))
        monkeypatch.setattr(direct, "_adapter_fits", {})
        adapter_type: Any = type(
            await database.transactions.read(lambda c: c.connection.dbapi_connection)
        )
        made = adapter_type.cursor
        monkeypatch.setattr(adapter_type, "cursor", counted)
        itself, by_cursor = await database.transactions.read(read_back)
        assert itself is False and cursors  # the cursor's way
        assert by_cursor == by_asyncpg and by_cursor["created_at"] == NOW
