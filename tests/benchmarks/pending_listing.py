"""``list_pending`` for one approver as the table grows (SQLite file and PostgreSQL).

    python -m tests.benchmarks.pending_listing [--sizes 1000,10000,100000] [--postgres URL]

For each size N: N pause records in the table, a tenth of them pending for the measured tenant
(the rest resolved, or other tenants'); the time of one /pending page (10 newest of one role) is
measured 200 times; the median is printed. With an index on (tenant, status, asked_at) the time
should grow like log N (a B-tree descent), not like N.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import insert

from bot.core.enums import PauseAnswerer, PauseStatus
from bot.store.database import Database
from bot.store.sql import SqlStore
from bot.store.tables import pauses

NOW = datetime(2026, 6, 1, tzinfo=UTC)
ROLES = ["refund-approval-channel", "expense-approval-channel", "deposit-approval-channel"]


def rows(size: int) -> list[dict[str, Any]]:
    made = []
    for i in range(size):
        mine = i % 10 == 0  # a tenth: the measured tenant's pending pauses
        made.append(
            {
                "pause_id": uuid.uuid4().hex,
                "tenant_id": "acme" if mine or i % 3 == 0 else f"tenant-{i % 50}",
                "idempotency_key": f"k{i}",
                "root_execution_id": f"r{i // 2}",
                "execution_id": f"r{i // 2}",
                "thread_id": f"t{i // 2}",
                "owner_id": f"U{i % 100}",
                "status": PauseStatus.PENDING.value if mine else PauseStatus.TAKEN.value,
                "is_sent": True,
                "answered_by": PauseAnswerer.CHANNEL.value,
                "role": ROLES[i % 3],
                "channel": "c",
                "agent": "a",
                "tool": "refund-card-tool",
                "call_id": f"c{i}",
                "node_id": "n",
                "ask": '{"tool":"refund-card-tool","arguments":{"amount":1},"call_id":"c"}',
                "asked_at": NOW + timedelta(seconds=i),
            }
        )
    return made


async def measure(url: str, size: int) -> float:
    database = Database.open(url)  # as the App runs its queries
    engine = database.engine
    try:
        await database.migrate(NOW)
        all_rows = rows(size)
        async with engine.begin() as connection:
            for start in range(0, size, 5000):
                await connection.execute(insert(pauses), all_rows[start : start + 5000])
        store = SqlStore(database)
        for _ in range(20):
            await store.list_pending(
                "acme", answered_by=PauseAnswerer.CHANNEL, roles=[ROLES[0]], limit=10
            )
        timings = []
        for _ in range(200):
            began = time.perf_counter()
            page = await store.list_pending(
                "acme", answered_by=PauseAnswerer.CHANNEL, roles=[ROLES[0]], limit=10
            )
            timings.append(time.perf_counter() - began)
        assert len(page) == 10
        return statistics.median(timings) * 1000
    finally:
        await database.close()


async def postgres_database(admin_url: str) -> tuple[str, str]:
    name = f"cs_bench_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(admin_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    base = admin_url.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return name, f"{base}/{name}"


async def drop(admin_url: str, name: str) -> None:
    admin = await asyncpg.connect(admin_url)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.close()


async def main(sizes: list[int], postgres: str | None) -> None:
    print("list_pending, one approver's page of 10 (median of 200):")
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            sqlite = await measure(f"sqlite+aiosqlite:///{Path(folder) / 'p.db'}", size)
        line = (
            f"  {size:>7} records ({size // 10:>6} pending for the tenant): SQLite {sqlite:6.2f} ms"
        )
        if postgres:
            name, url = await postgres_database(postgres)
            try:
                line += f"   PostgreSQL {await measure(url, size):6.2f} ms"
            finally:
                await drop(postgres, name)
        print(line)
    print("  target: median < 20 ms at 100,000 records, growing like log n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--no-postgres", action="store_true")
    arguments = parser.parse_args()
    asyncio.run(
        main(
            [int(s) for s in arguments.sizes.split(",")],
            None if arguments.no_postgres else arguments.postgres,
        )
    )
