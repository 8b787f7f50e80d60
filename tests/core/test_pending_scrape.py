"""A ``/metrics`` scrape is not held up by a slow reading of the pending pauses: the first
scrape waits for it, a later one is served the last reading while the new one finishes."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.core.metrics import PENDING_CACHE, Metrics, PendingByRole
from bot.testing import FakeClock


def pending_line(text: bytes) -> str:
    [line] = [
        line
        for line in text.decode().splitlines()
        if line.startswith("countersign_pending_pauses{")
    ]
    return line


async def test_a_slow_reading_serves_the_last_one_and_the_next_scrape_the_new_one() -> None:
    clock = FakeClock()
    metrics = Metrics(clock)
    count = 3
    slow = asyncio.Event()
    slow.set()

    async def source() -> list[PendingByRole]:
        read = count
        await slow.wait()
        return [PendingByRole(role="refund-role", count=read, oldest_asked_at=clock.now())]

    metrics.read_pending_with(source)
    assert pending_line(await metrics.exposition()).endswith(" 3.0")  # the first one waits

    count = 5
    slow.clear()  # the store is slow now: a reading that does not end by itself
    await clock.advance(PENDING_CACHE + timedelta(seconds=1))
    assert pending_line(await metrics.exposition()).endswith(" 3.0")  # served, not held up

    slow.set()
    await metrics.close()  # the reading under way ends
    assert pending_line(await metrics.exposition()).endswith(" 5.0")


async def test_a_store_that_fails_fails_the_scrape() -> None:
    metrics = Metrics(FakeClock())

    async def failing() -> list[PendingByRole]:
        raise OSError("the database is gone")

    metrics.read_pending_with(failing)
    with pytest.raises(OSError, match="gone"):
        await metrics.exposition()
