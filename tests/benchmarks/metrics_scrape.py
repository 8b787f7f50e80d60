"""One ``/metrics`` scrape with 100k pause records on a SQLite file (and PostgreSQL if given).

    python -m tests.benchmarks.metrics_scrape [--size 100000] [--postgres [URL]]

The pending pauses by role are read with one grouped query on the index
``ix_cs_pauses_status_role_asked`` (a covering index: the pending entries only, no row read),
then kept ``PENDING_CACHE``. Printed, each the median of 50: the grouped query alone, a scrape
that reads the store (the cache stale), and a scrape served from the cache; with a tenth of the
records pending (the rest answered), and with every one pending (the worst case).

``--postgres`` alone measures both on PostgreSQL databases made for the run (``tests.databases``:
127.0.0.1:5432) and dropped after it; ``--postgres URL`` a tenth pending on that database, which
must be empty: the benchmark writes its records there and leaves them, so it refuses one that
holds a table.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, inspect

from bot.core.enums import PauseStatus
from bot.core.metrics import PENDING_CACHE, Metrics
from bot.store.database import Database
from bot.store.sql import SqlStore
from bot.store.tables import pauses
from bot.testing import FakeClock
from tests.benchmarks.pending_listing import NOW, rows
from tests.databases import postgres_database

RUNS = 50


async def median_ms(
    work: Callable[[], Awaitable[Any]], before: Callable[[], Awaitable[None]]
) -> float:
    timings = []
    for _ in range(RUNS):
        await before()
        began = time.perf_counter()
        await work()
        timings.append((time.perf_counter() - began) * 1000)
    return statistics.median(timings)


async def measure(url: str, size: int, *, all_pending: bool) -> str:
    database = Database.open(url)
    try:
        await database.migrate(NOW)
        made = rows(size)
        if all_pending:
            for row in made:
                row["status"] = PauseStatus.PENDING.value
        async with database.engine.begin() as connection:
            for start in range(0, size, 5000):
                await connection.execute(insert(pauses), made[start : start + 5000])
        store = SqlStore(database)
        clock = FakeClock()
        metrics = Metrics(clock)
        metrics.read_pending_with(store.pending_by_role)

        async def stale() -> None:
            await clock.advance(PENDING_CACHE + timedelta(seconds=1))
            await asyncio.sleep(0.01)  # what the advance woke settles before the timing

        async def fresh() -> None:
            return None

        query = await median_ms(store.pending_by_role, fresh)
        uncached = await median_ms(metrics.exposition, stale)
        cached = await median_ms(metrics.exposition, fresh)
        pending = sum(r.count for r in await store.pending_by_role())
        return (
            f"{size} records, {pending} pending: grouped query {query:.2f} ms, "
            f"scrape reading the store {uncached:.2f} ms, scrape from the cache {cached:.2f} ms"
        )
    finally:
        await database.close()


NEW_DATABASE = "new"
"""``--postgres`` without a URL: a database made for the run, dropped after it."""


class NotEmpty(Exception):
    """The database given to write the benchmark's records into already holds tables."""


async def tables_in(url: str) -> list[str]:
    """The tables of ``url``'s database (its default schema)."""
    database = Database.open(url)
    try:
        async with database.engine.connect() as connection:
            return await connection.run_sync(lambda sync: inspect(sync).get_table_names())
    finally:
        await database.close()


async def refuse_if_not_empty(url: str) -> None:
    """Raise ``NotEmpty`` when ``url``'s database holds a table (checked before any work)."""
    held = await tables_in(url)
    if held:
        raise NotEmpty(
            f"the database given holds {len(held)} tables (e.g. {held[0]}): the benchmark "
            "writes its records into the database it is given and leaves them; give an empty "
            "one, or --postgres alone for one made and dropped by the run"
        )


async def on_postgres(postgres: str, size: int) -> list[str]:
    """A database given: a tenth pending (its records left there). One made for the run: that,
    then every record pending (the target's worst case), each on a database of its own."""
    if postgres != NEW_DATABASE:
        return [await measure(postgres, size, all_pending=False)]
    lines = []
    for all_pending in (False, True):
        async with postgres_database() as url:
            lines.append(await measure(url, size, all_pending=all_pending))
    return lines


async def main(size: int, postgres: str | None) -> None:
    if postgres is not None and postgres != NEW_DATABASE:
        await refuse_if_not_empty(postgres)
    with tempfile.TemporaryDirectory() as folder:
        for all_pending in (False, True):
            url = f"sqlite+aiosqlite:///{Path(folder) / f'scrape-{all_pending}.db'}"
            print("SQLite file:", await measure(url, size, all_pending=all_pending), flush=True)
    if postgres is not None:
        for line in await on_postgres(postgres, size):
            print("PostgreSQL:", line, flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument(
        "--postgres",
        nargs="?",
        const=NEW_DATABASE,
        default=None,
        help="an empty PostgreSQL database's URL; alone: one made for the run and dropped",
    )
    options = parser.parse_args()
    try:
        asyncio.run(main(options.size, options.postgres))
    except NotEmpty as refused:
        raise SystemExit(f"metrics_scrape: {refused}") from None
