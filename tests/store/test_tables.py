"""Column types: ``UtcDateTime`` on SQLite stores the text SQLAlchemy's SQLite ``DATETIME``
stores, and reads back what it read, through its own one-call conversions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Column, Integer, MetaData, Table, create_engine, insert, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.types import TypeDecorator

from bot.store.tables import UtcDateTime

DIALECT = sqlite.dialect()
SQLALCHEMY_DATETIME = sqlite.DATETIME()  # type: ignore[no-untyped-call]
SQLALCHEMY_TEXT = SQLALCHEMY_DATETIME.bind_processor(DIALECT)
SQLALCHEMY_READ = SQLALCHEMY_DATETIME.result_processor(DIALECT, None)
ZONES = st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-23 * 60, 23 * 60)
)
MOMENTS = st.datetimes(
    min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31), timezones=ZONES
)


def _dialect_impl() -> UtcDateTime:
    impl = UtcDateTime().dialect_impl(DIALECT)
    assert isinstance(impl, UtcDateTime)
    return impl


@settings(max_examples=300, deadline=None)
@given(MOMENTS)
def test_sqlite_text_is_sqlalchemys(moment: datetime) -> None:
    impl = _dialect_impl()
    text = impl.bind_processor(DIALECT)(moment)  # type: ignore[misc]
    assert SQLALCHEMY_TEXT is not None and SQLALCHEMY_READ is not None
    assert text == SQLALCHEMY_TEXT(moment.astimezone(UTC))
    # and what SQLAlchemy's own chain (this type's methods around DATETIME's) makes of it
    assert text == TypeDecorator.bind_processor(impl, DIALECT)(moment)  # type: ignore[misc]
    read = impl.result_processor(DIALECT, None)(text)  # type: ignore[misc]
    assert read == moment and read.tzinfo is UTC
    assert read == TypeDecorator.result_processor(impl, DIALECT, None)(text)  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-01 12:00:00",
        "2026-03-01 12:00:00.5",
        "2026-03-01T12:00:00+02:00",
        "2026-03-01 12:00:00.123+01:00",
        "2026-03-01",
        "2026-03-01 12-02:00.123456",  # our length, a zone after the hour
    ],
)
def test_sqlite_reads_what_others_wrote_as_sqlalchemy_does(text: str) -> None:
    """Text not written by us (a migration's default, another tool) reads as before."""
    impl = _dialect_impl()
    expected = TypeDecorator.result_processor(impl, DIALECT, None)(text)  # type: ignore[misc]
    assert impl.result_processor(DIALECT, None)(text) == expected  # type: ignore[misc]


OURS = "2026-03-01 12:00:00.123456"
ALTERED = st.lists(
    st.tuples(st.integers(0, len(OURS) - 1), st.sampled_from("0123456789-:. TZz+UTC,_")),
    min_size=1,
    max_size=4,
)


@settings(max_examples=500, deadline=None)
@given(ALTERED)
def test_sqlite_reads_any_text_as_sqlalchemy_does(changes: list[tuple[int, str]]) -> None:
    """Our text with characters changed (a zone after the hour, a letter in the fraction...)
    is read, or refused, as SQLAlchemy's chain reads it: only our own shape is read the
    short way."""
    text = list(OURS)
    for index, character in changes:
        text[index] = character
    altered = "".join(text)
    impl = _dialect_impl()
    ours = impl.result_processor(DIALECT, None)
    chain = TypeDecorator.result_processor(impl, DIALECT, None)
    assert ours is not None and chain is not None
    try:
        expected = chain(altered)
    except ValueError:
        with pytest.raises(ValueError):
            ours(altered)
        return
    read = ours(altered)
    assert read == expected and read.tzinfo is UTC


def test_sqlite_refuses_naive_and_keeps_none() -> None:
    impl = _dialect_impl()
    write, read = impl.bind_processor(DIALECT), impl.result_processor(DIALECT, None)
    assert write is not None and read is not None
    with pytest.raises(ValueError, match="naive"):
        write(datetime(2026, 3, 1))
    assert write(None) is None and read(None) is None


def test_sqlite_file_holds_sqlalchemys_text(tmp_path: Path) -> None:
    table = Table(
        "t", MetaData(), Column("id", Integer, primary_key=True), Column("at", UtcDateTime)
    )
    engine = create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    table.create(engine)
    moment = datetime(2026, 3, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    with engine.begin() as connection:
        connection.execute(insert(table), {"id": 1, "at": moment})
    with engine.connect() as connection:
        raw = connection.exec_driver_sql("SELECT at FROM t").scalar()
        back = connection.execute(select(table.c.at)).scalar()
    engine.dispose()
    assert raw == "2026-03-01 12:00:00.000000"
    assert back == moment and back.tzinfo is UTC
