"""A SQLite file's disk: its write-ahead logs stay bounded, and ``/readyz`` says when the
database cannot be written (a full disk, a read-only one) — reads go on working there, so a
``SELECT 1`` alone said ready.

The disk is a small tmpfs of the test's own, mounted for the test and unmounted after it
(skipped where mounting is not allowed: not root, no ``CAP_SYS_ADMIN``)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot import App, Settings
from bot.runtime.probes import probe_app
from bot.store.database import SQLITE_WAL_LIMIT_BYTES, SQLITE_WAL_PAGES, Database
from bot.testing import FakeClock, mock_llm
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.office import OFFICE, Ledger, OfficeApplication

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@contextlib.asynccontextmanager
async def office_on(path: Path) -> AsyncIterator[App]:
    mock_llm(OFFICE.agent)  # no model is called: the agent needs none served
    async with await App.create(
        OfficeApplication,
        database_url=f"sqlite+aiosqlite:///{path}",
        clock=FakeClock(),
        settings=Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS),
        services={Ledger: Ledger()},
    ) as app:
        yield app


@contextlib.asynccontextmanager
async def probes(app: App) -> AsyncIterator[TestClient[Any, Any]]:
    client = TestClient(TestServer(probe_app(app, is_open=lambda: True)))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


async def readyz(client: TestClient[Any, Any]) -> tuple[int, Any]:
    async with client.get("/readyz") as response:
        return response.status, await response.json()


def _mount(*arguments: str) -> bool:
    done = subprocess.run(["mount", *arguments], capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs at ``tmp_path/disk``, unmounted when the test ends."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or not _mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)):
        pytest.skip("a tmpfs cannot be mounted here (needs root with CAP_SYS_ADMIN)")
    try:
        yield disk
    finally:
        _mount("-o", "remount,rw", str(disk))
        if subprocess.run(["umount", str(disk)], check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk: Path) -> Path:
    """Fill ``disk`` to its last byte with a file of its own; returns the file."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as file:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    file.write(b"\0" * size)
    return filler


async def test_every_sqlite_connection_bounds_its_write_ahead_log(tmp_path: Path) -> None:
    async with office_on(tmp_path / "countersign.db") as app:
        store = await app.database.transactions.read(
            lambda c: (
                c.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar(),
                c.exec_driver_sql("PRAGMA journal_size_limit").scalar(),
            )
        )
        saver: Any = app.checkpointer
        [saver_pages] = await saver.fetch_one("PRAGMA wal_autocheckpoint")
        [saver_limit] = await saver.fetch_one("PRAGMA journal_size_limit")
    assert store == (SQLITE_WAL_PAGES, SQLITE_WAL_LIMIT_BYTES)
    assert (saver_pages, saver_limit) == (SQLITE_WAL_PAGES, SQLITE_WAL_LIMIT_BYTES)


async def test_readyz_says_not_ready_on_a_full_disk_and_ready_once_there_is_room(
    small_disk: Path,
) -> None:
    async with office_on(small_disk / "countersign.db") as app, probes(app) as client:
        assert await readyz(client) == (200, {"status": "ready"})

        filler = _fill(small_disk)
        status, body = await readyz(client)
        assert status == 503, body
        assert "countersign.db is full" in str(body), body

        filler.unlink()
        assert await readyz(client) == (200, {"status": "ready"})


async def test_a_database_that_cannot_be_written_is_not_ready(tmp_path: Path) -> None:
    """The write itself is tried (the disk has room here): a file opened read-only refuses
    it, where ``SELECT 1`` still answers. (A read-only mount is the same refusal; root
    ignores a file's permissions, so a read-only open stands in for both here.)"""
    path = tmp_path / "countersign.db"
    async with Database.open(f"sqlite+aiosqlite:///{path}") as database:
        await database.migrate(NOW)
        assert await database.problem() is None
    read_only = Database.open(f"sqlite+aiosqlite:///file:{path}?mode=ro&uri=true")
    async with read_only:
        assert await read_only.holds_rows() is False  # it reads
        problem = await read_only.problem()
    assert problem is not None and "readonly" in problem, problem
