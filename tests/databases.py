"""Databases for tests: a SQLite file, or a fresh PostgreSQL database per test.

PostgreSQL is used when it answers at COUNTERSIGN_TEST_POSTGRES (default the local server);
otherwise its tests are skipped with the reason — unless COUNTERSIGN_REQUIRE_POSTGRES=1, which
makes a missing server a failure (CI sets it).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
import pytest

ADMIN_URL = os.environ.get("COUNTERSIGN_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
REQUIRED = os.environ.get("COUNTERSIGN_REQUIRE_POSTGRES") == "1"
TEST_ENCRYPTION_KEYS = "test:" + "A" * 43 + "="  # a fixed 32-byte key, for tests only


async def _admin() -> asyncpg.Connection:
    try:
        return await asyncpg.connect(ADMIN_URL, timeout=5)
    except (OSError, asyncpg.PostgresError) as error:
        reason = f"PostgreSQL does not answer at {ADMIN_URL}: {type(error).__name__}: {error}"
        if REQUIRED:
            pytest.fail(f"{reason} (COUNTERSIGN_REQUIRE_POSTGRES=1)")
        pytest.skip(reason)


@asynccontextmanager
async def postgres_database() -> AsyncIterator[str]:
    """A new empty database; yields its SQLAlchemy URL; dropped afterwards."""
    admin = await _admin()
    name = f"cs_test_{uuid.uuid4().hex[:12]}"
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    base = ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    try:
        yield f"{base}/{name}"
    finally:
        admin = await _admin()
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@asynccontextmanager
async def database(kind: str, tmp_path: Path) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    elif kind == "postgres":
        async with postgres_database() as url:
            yield url
    else:  # pragma: no cover
        raise ValueError(kind)


BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]

STORE_BACKENDS = [*BACKENDS, pytest.param("memory", id="memory")]
"""The store's contract runs on both databases and on the in-memory store (``bot.store.memory``)."""
