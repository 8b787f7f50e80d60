"""One ``/metrics`` scrape with 100k pause records on a SQLite file (and PostgreSQL if given).

    python -m tests.benchmarks.metrics_scrape [--size 100000] [--postgres URL]

The pending pauses by role are read with one grouped query on the index
``ix_cs_pauses_status_role_asked`` (a covering index: the pending entries only, no row read),
then kept ``PENDING_CACHE``. Printed, each the median of 50: the grouped query alone, a scrape
that reads the store (the cache stale), and a scrape served from the cache; with a tenth of the
records pending (the rest answered), and with every one pending (the worst case).
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

from sqlalchemy import insert

from bot.core.enums import PauseStatus
from bot.core.metrics import PENDING_CACHE, Metrics
from bot.store.database import Database
from bot.store.sql import SqlStore
from bot.store.tables import pauses
from bot.testing import FakeClock
from tests.benchmarks.pending_listing import NOW, rows

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


async def main(size: int, postgres: str | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for all_pending in (False, True):
            url = f"sqlite+aiosqlite:///{Path(folder) / f'scrape-{all_pending}.db'}"
            print("SQLite file:", await measure(url, size, all_pending=all_pending), flush=True)
    if postgres:
        print("PostgreSQL:", await measure(postgres, size, all_pending=False), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--postgres", default=None, help="an empty PostgreSQL database's URL")
    options = parser.parse_args()
    asyncio.run(main(options.size, options.postgres))
