"""How big a SQLite deployment's files grow, and the process's RSS, as executions go through.

    python -m tests.benchmarks.sqlite_files [--executions 3000] [--step 500] [--cache-kib N]

Each execution is the pause cycle of ``tests.benchmarks.cycle_cost`` (execute to the pause,
answer, continue to the end), ten at a time, in this process on a SQLite file. After each
``--step`` it prints the RSS (after a collection) and each file's peak size so far: the store and
the checkpointer, and their write-ahead logs (bounded by ``SQLITE_WAL_PRAGMAS``).
``--cache-kib``: SQLite's page cache per connection (its default is 2,000 KiB), to tell that
cache's share of the RSS from the rest.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import tempfile
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event

from bot import WorkflowStartText
from tests.benchmarks.cycle_cost import bench_app
from tests.benchmarks.resume_throughput import Inbox, PayWorkflow


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        resident = int(statm.read().split()[1])
    return resident * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure(folder: Path, peak: dict[str, int]) -> None:
    """Each file's peak size so far (a few stat calls: a benchmark's, between executions)."""
    for path in folder.iterdir():
        peak[path.name] = max(peak.get(path.name, 0), path.stat().st_size)


async def main(executions: int, step: int, cache_kib: int | None) -> None:
    cache = None if cache_kib is None else f"PRAGMA cache_size=-{cache_kib}"
    if cache is not None:

        def sized(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute(cache)
            cursor.close()

        event.listen(Engine, "connect", sized)  # every connection of the store's engines
    inbox = Inbox()
    with tempfile.TemporaryDirectory() as folder:
        async with bench_app(f"sqlite+aiosqlite:///{Path(folder) / 'files.db'}", inbox) as app:
            if cache is not None:
                saver: Any = app.checkpointer
                await saver.conn.execute(cache)
            gate = asyncio.Semaphore(10)
            peak: dict[str, int] = {}

            async def cycle(i: int) -> None:
                async with gate:
                    invoice = f"x{i}"
                    await app.execute(
                        PayWorkflow, WorkflowStartText(text=invoice), tenant_id="t", owner_id="o"
                    )
                    await app.resume(
                        inbox.pending.pop(invoice),
                        decision={"approved": True},
                        tenant_id="t",
                        answered_by="m",
                    )
                    measure(Path(folder), peak)

            for start in range(0, executions, step):
                await asyncio.gather(*(cycle(i) for i in range(start, start + step)))
                gc.collect()
                sizes = ", ".join(f"{n} {s / 2**20:.1f}" for n, s in sorted(peak.items()))
                print(f"{start + step} executions: RSS {rss_mib():.1f} MiB; peak MiB: {sizes}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--executions", type=int, default=3000)
    parser.add_argument("--step", type=int, default=500)
    parser.add_argument("--cache-kib", type=int, default=None)
    options = parser.parse_args()
    asyncio.run(main(options.executions, options.step, options.cache_kib))
