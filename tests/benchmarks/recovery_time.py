"""How long a tree whose instance was SIGKILLed waits before another instance continues it.

    python -m tests.benchmarks.recovery_time [--database sqlite|postgres] [--runs 3]

Two cases, each run ``--runs`` times on the system clock: ``answers`` (the instance recorded
answers, phase 1, and died before continuing them: no lease is held) and ``tool`` (it died
inside an approved tool, holding the tree's lease, which must expire first). A survivor App
started right after the kill continues the tree on its own sweep; the time from the kill to the
tree's completion is printed. Target: under 15 s.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot import App, ExecutionStatus, Settings
from tests.databases import TEST_ENCRYPTION_KEYS, postgres_database
from tests.runtime.crash_worker import CrashApplication, Ledger, run_until_killed

ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def fresh_database(kind: str) -> AsyncIterator[str]:
    if kind == "postgres":
        async with postgres_database() as url:
            yield url
        return
    with tempfile.TemporaryDirectory() as folder:
        yield f"sqlite+aiosqlite:///{Path(folder) / 'countersign.db'}"


def kill_a_worker(url: str, mode: str) -> tuple[str, float]:
    """Run the crash worker until it dies; its execution id and when it died."""
    out = run_until_killed(url, 1, mode, system_clock=True)
    [execution_id] = re.findall(r"^execution (\w+)", out, re.MULTILINE)
    return execution_id, time.monotonic()


async def time_recovery(kind: str, mode: str) -> float:
    async with fresh_database(kind) as url:
        execution_id, died = await asyncio.to_thread(kill_a_worker, url, mode)
        settings = Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS)
        async with await App.create(
            CrashApplication, database_url=url, settings=settings, services={Ledger: Ledger()}
        ) as survivor:
            while True:
                result = await survivor.get_result(execution_id, tenant_id="acme")
                if result.status is ExecutionStatus.COMPLETED:
                    return time.monotonic() - died
                if time.monotonic() - died > 120:
                    raise RuntimeError("not recovered after 120 s")
                await asyncio.sleep(0.05)


async def main(kind: str, runs: int) -> None:
    for mode in ("answers", "tool"):
        times = [await time_recovery(kind, mode) for _ in range(runs)]
        print(
            f"{kind} {mode:8s}: recovered after {statistics.median(times):.1f} s median "
            f"(max {max(times):.1f} s, {runs} runs; target < 15 s)",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.database, arguments.runs))
