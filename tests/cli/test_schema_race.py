"""Instances started at once on a new PostgreSQL database: every schema step takes turns.

Our migrations and LangGraph's saver setup both create tables; run by two processes at once
without one lock, one of them died with a ``UniqueViolation``. Processes are started once and
raced on several new databases (their imports would dwarf the race otherwise).
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import AsyncExitStack

import pytest

from tests.cli.processes import REPO, person_env
from tests.databases import postgres_database

INSTANCES = 3
RACES = 4


@pytest.mark.postgres
async def test_instances_started_at_once_on_new_databases_all_start() -> None:
    async with AsyncExitStack() as stack:
        urls = [await stack.enter_async_context(postgres_database()) for _ in range(RACES)]
        processes = [await start_instance() for _ in range(INSTANCES)]
        try:
            said = [await race(processes, url) for url in urls]
        finally:
            for process in processes:
                if process.returncode is None:
                    process.kill()
                await process.wait()

    assert said == [["started PAUSED"] * INSTANCES] * RACES


async def start_instance() -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.cli.start_at_once",
        cwd=REPO,
        env=person_env(PYTHONPATH=str(REPO)),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert await answer(process) == "ready"
    return process


async def race(processes: list[asyncio.subprocess.Process], url: str) -> list[str]:
    """Hand every process ``url`` at once; what each said."""
    for process in processes:
        assert process.stdin is not None
        process.stdin.write(f"{url}\n".encode())
    await asyncio.gather(*(p.stdin.drain() for p in processes if p.stdin is not None))
    return list(await asyncio.gather(*(answer(p) for p in processes)))


async def answer(process: asyncio.subprocess.Process) -> str:
    assert process.stdout is not None
    return (await asyncio.wait_for(process.stdout.readline(), 60)).decode().strip()
