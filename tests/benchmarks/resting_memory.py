"""Memory of resting executions: RSS before and after N executions paused and resting.

    python -m tests.benchmarks.resting_memory [--executions 10000] [--concurrency 20]

Nothing of a resting execution should stay in memory: its pause record and checkpoints are in
the database. Target: growth < 20 MB for 10,000 paused executions (SQLite file).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import tempfile
import time
from pathlib import Path

from bot import App, ExecutionStatus, Settings, WorkflowStartText
from bot.testing import FakeClock
from tests.benchmarks.resume_throughput import BenchApplication, Inbox, PayWorkflow


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * resource.getpagesize() / 1024 / 1024


async def main(executions: int, concurrency: int, warmup: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        inbox = Inbox()
        url = f"sqlite+aiosqlite:///{Path(folder) / 'resting.db'}"
        async with await App.create(
            BenchApplication,
            database_url=url,
            clock=FakeClock(),
            settings=Settings(),
            services={Inbox: inbox},
        ) as app:
            gate = asyncio.Semaphore(concurrency)

            async def one(i: int) -> None:
                async with gate:
                    result = await app.execute(
                        PayWorkflow, WorkflowStartText(text=f"inv-{i}"), tenant_id="t", owner_id="o"
                    )
                    assert result.status is ExecutionStatus.PAUSED

            # warm up until the connection pools and SQLite's page caches are full
            await asyncio.gather(*(one(-1 - i) for i in range(warmup)))
            inbox.pending.clear()
            gc.collect()
            before = rss_mb()
            began = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(executions)))
            elapsed = time.perf_counter() - began
            inbox.pending.clear()  # the benchmark's own record of pause ids, not the runtime's
            gc.collect()
            after = rss_mb()
            pending = await app.list_pending(tenant_id="t", limit=executions + 500)
    print(f"{executions} executions paused and resting ({len(pending)} pending) in {elapsed:.0f} s")
    print(
        f"  RSS before {before:.1f} MB, after {after:.1f} MB: growth {after - before:+.1f} MB "
        "(target < 20 MB)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--executions", type=int, default=10000)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.executions, arguments.concurrency, arguments.warmup))
