"""Instructions per pause cycle, ours and bare LangGraph's, counted by callgrind.

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cycle.out \\
        python -m tests.benchmarks.cycle_instructions [--cycles 10] [--database D] [ours|bare]

CPU milliseconds (``cycle_cost --part timing``) move by a tenth or more from run to run on a
machine other work shares; the instructions the process executes (every thread's, the
kernel's excepted) do not, so a cut worth 5% can be told from noise in one run of each. The
count is collected only around the measured cycles (``callgrind_control -i on|off`` on this
process), after a warm-up, and read from valgrind's "Collected" line. The garbage collections
in the window are printed: a full one (generation 2) adds about 80 million instructions, so
compare runs with the same collections, or run more cycles (``--cycles 50``). Same loop as
``cycle_cost``: ``App.execute`` to the pause, ``App.resume`` to the end, on a SQLite file (or,
``--database postgres``, on a new PostgreSQL database of the test server: the client's
instructions only; the server's CPU is ``cycle_cost --part timing --database postgres``'s).

Where the count goes, by thread: add ``--separate-threads=yes`` (one output file per thread,
``callgrind_annotate <file>-NN | grep TOTALS``): thread 01 is the event loop (LangGraph's
passes, our steps, the store's short calls), the one mostly in ``libsqlite3`` and the
serialisation is the checkpointer's (``ThreadedSqliteSaver``'s thread on our side, aiosqlite's
on bare's), the others are the store's worker threads (calls not short: none in the cycle).

``--store memory`` (ours only): Countersign's own tables kept in memory
(``bot.store.memory.MemoryStore``) instead of in the database, the checkpointer unchanged: what
the cycle costs beside its store's work, the floor that work sits on. Not a configuration a
user can run (nothing would survive a restart): a measurement of where the factor comes from.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import subprocess
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from unittest import mock

from bot.store.memory import MemoryStore
from tests.benchmarks.cycle_cost import bench_app, database_url, pay_cycle
from tests.benchmarks.resume_throughput import Inbox, bare_cycle, postgres_saver, sqlite_saver

WARM_UP = 10


def _collect(on: bool) -> None:
    subprocess.run(
        ["callgrind_control", "-i", "on" if on else "off", str(os.getpid())],
        check=True,
        capture_output=True,
    )


async def _measured(cycle: Callable[[int], Awaitable[None]], cycles: int) -> None:
    for i in range(WARM_UP):
        await cycle(-i - 1)
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    _collect(True)
    for i in range(cycles):
        await cycle(i)
    _collect(False)
    gc.callbacks.remove(seen)
    # a full collection costs millions of instructions: one more or less in a short window
    # moves the count by a fifth (``callgrind_annotate --inclusive=yes`` shows gc_collect_main)
    print(f"garbage collections in the window: {Counter(collections)} (by generation)")


def store_in_memory() -> contextlib.AbstractContextManager[object]:
    """Apps created meanwhile keep their pauses and executions in a ``MemoryStore``."""
    return mock.patch("bot.wiring.SqlStore", side_effect=lambda _database, _codec: MemoryStore())


async def main(side: str, cycles: int, database: str = "sqlite", store: str = "sql") -> None:
    if store == "memory":
        with store_in_memory():
            await main(side, cycles, database)
        return
    inbox = Inbox()
    async with database_url(database, "instructions") as url, bench_app(url, inbox) as app:

        async def ours(i: int) -> None:
            invoice = f"n{i}"
            await pay_cycle(app, inbox, invoice)

        if side == "ours":
            await _measured(ours, cycles)
            return
        if database == "postgres":
            async with (
                database_url(database, "bare") as bare_url,
                postgres_saver(bare_url) as saver,
            ):
                await _measured(bare_cycle(saver), cycles)
            return
        with tempfile.TemporaryDirectory() as folder:
            async with sqlite_saver(Path(folder)) as saver:
                await _measured(bare_cycle(saver), cycles)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("side", choices=["ours", "bare"], nargs="?", default="ours")
    parser.add_argument("--cycles", type=int, default=10)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--store", choices=["sql", "memory"], default="sql")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.side, arguments.cycles, arguments.database, arguments.store))
