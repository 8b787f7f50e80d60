"""The served process trims the C heap once a minute (``bot.cli.heap``): RSS follows what is in
use instead of the free pages glibc keeps (``python -m tests.benchmarks.server_soak``)."""

from __future__ import annotations

import ctypes
import platform
from datetime import timedelta

import pytest

from bot.cli.heap import HEAP_TRIM_INTERVAL, heap_trim, trimming_heap
from bot.testing import FakeClock


async def test_the_heap_is_trimmed_each_interval_while_serving_and_never_after() -> None:
    clock = FakeClock()
    trims: list[str] = []
    with trimming_heap(clock, lambda: trims.append("trimmed")):
        await clock.advance(HEAP_TRIM_INTERVAL - timedelta(seconds=1))
        assert trims == []
        await clock.advance(timedelta(seconds=1))
        assert trims == ["trimmed"]
        await clock.advance(HEAP_TRIM_INTERVAL)
        assert len(trims) == 2
    await clock.advance(HEAP_TRIM_INTERVAL)
    await clock.advance(HEAP_TRIM_INTERVAL)
    assert len(trims) == 2  # the timer went with the block


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_glibc_trim_hands_free_pages_back() -> None:
    trim = heap_trim()
    assert trim is not None
    # 80 MiB of small blocks freed below one still in use: glibc keeps their pages, resident,
    # until trimmed
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(4096) for _ in range(20_000)]
    for block in blocks[:-1]:
        libc.free(block)
    before = _resident()
    trim()
    after = _resident()
    libc.free(blocks[-1])
    assert before - after > 40 * 2**20, (before, after)


def _resident() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096
