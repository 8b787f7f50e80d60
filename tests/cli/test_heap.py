"""The served process keeps glibc to two malloc arenas (``bot.cli.heap``), unless the
environment says how many: its RSS grew half as fast over a soak
(``python -m tests.benchmarks.server_soak``)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from bot.cli.heap import ARENA_SETTING, limit_malloc_arenas

GLIBC = platform.libc_ver()[0] == "glibc"


def test_the_environment_wins() -> None:
    assert limit_malloc_arenas({ARENA_SETTING: "4"}) is False


@pytest.mark.skipif(not GLIBC, reason="mallopt(M_ARENA_MAX) is glibc's")
def test_threads_share_two_arenas_once_limited() -> None:
    assert _arenas_after_threads(limited=False) > 2
    assert _arenas_after_threads(limited=True) <= 2


def _arenas_after_threads(*, limited: bool) -> int:
    """In a fresh process (arenas are made once per thread): how many arenas eight threads
    mallocing at once made (``malloc_info`` lists one ``<heap>`` per arena)."""
    script = f"""
import ctypes, threading
from bot.cli.heap import limit_malloc_arenas
if {limited}:
    assert limit_malloc_arenas({{}})
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
start = threading.Barrier(8)
def work():
    start.wait()
    for _ in range(2000):
        libc.malloc(64)
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc.fdopen.restype = ctypes.c_void_p
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
out = libc.fdopen(1, b"w")
libc.malloc_info(0, out)
libc.fflush(None)
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    return done.stdout.count("<heap nr=")
