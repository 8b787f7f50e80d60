"""The ``/metrics`` benchmark writes 100k records into the PostgreSQL database it is given and
leaves them there: it refuses one that already holds a table (one session pointed it at the
shared ``test`` database), and measures on databases made for the run (dropped after) when
given none."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import asyncpg
import pytest

from tests.benchmarks import metrics_scrape
from tests.benchmarks.metrics_scrape import NotEmpty, refuse_if_not_empty, tables_in
from tests.databases import ADMIN_URL, postgres_database


def _plain(url: str) -> str:
    return url.replace("+asyncpg", "")


async def test_the_scrape_benchmark_refuses_a_database_that_holds_a_table() -> None:
    async with postgres_database() as url:
        await refuse_if_not_empty(url)  # empty: accepted
        connection = await asyncpg.connect(_plain(url))
        try:
            await connection.execute("CREATE TABLE somebody_elses (id int)")
        finally:
            await connection.close()
        with pytest.raises(NotEmpty, match="somebody_elses"):
            await refuse_if_not_empty(url)
        with pytest.raises(NotEmpty):  # before the SQLite part, before any write
            await metrics_scrape.main(10, url)
        assert await tables_in(url) == ["somebody_elses"]  # nothing written beside it


async def test_the_scrape_benchmark_without_a_url_drops_the_database_it_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []

    @contextlib.asynccontextmanager
    async def recorded() -> AsyncIterator[str]:
        async with postgres_database() as url:
            made.append(url)
            yield url

    monkeypatch.setattr(metrics_scrape, "postgres_database", recorded)
    tenth, every = await metrics_scrape.on_postgres(metrics_scrape.NEW_DATABASE, 200)
    assert tenth.startswith("200 records, 20 pending")
    assert every.startswith("200 records, 200 pending")  # the target's worst case
    assert len(made) == 2  # each on a database of its own
    admin = await asyncpg.connect(_plain(ADMIN_URL))
    try:
        left = "SELECT count(*) FROM pg_database WHERE datname = $1"
        for url in made:
            assert await admin.fetchval(left, url.rsplit("/", 1)[-1]) == 0
    finally:
        await admin.close()
