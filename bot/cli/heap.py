"""A long-running server keeps glibc to two malloc arenas (``MALLOC_ARENA_MAX=2``).

Measured on ``python -m bot serve`` over SQLite (``python -m tests.benchmarks.server_soak
--diagnose``): after the warm-up the objects Python holds, what tracemalloc sees and SQLite's own
heap (its page caches) stay flat; glibc's heap in use stays flat (40.6 -> 40.8 MiB over 1,770
executions) while the free memory it keeps grows (3.8 -> 8.1 MiB), and RSS with it (2.7 MiB per
1,000 executions). That free memory is scattered between live blocks across one arena per
thread that mallocs (the event loop, each SQLite connection's worker, the thread pools: up to 8
per core); ``malloc_trim(0)`` every 30 s gave none of it back (2.9 MiB per 1,000). Two
10-minute soaks side by side, 3,200 executions each: 16 arenas (glibc's default here) +1.25
MiB per 1,000 (slope +1.75; kept free +2.6 MiB), two arenas +0.82 (slope +0.75; kept free
+1.25 MiB); one arena was no flatter than two, and serialises every thread's malloc.

Set before the first worker thread starts; a ``MALLOC_ARENA_MAX`` in the environment wins (glibc
read it at start). glibc only: elsewhere (musl, macOS) nothing is done.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping
from typing import Final

ARENAS: Final = 2
M_ARENA_MAX: Final = -8  # glibc's malloc.h
ARENA_SETTING: Final = "MALLOC_ARENA_MAX"


def limit_malloc_arenas(environ: Mapping[str, str] | None = None, arenas: int = ARENAS) -> bool:
    """Keep glibc to ``arenas`` malloc arenas unless the environment says how many; whether
    this set it."""
    if ARENA_SETTING in (os.environ if environ is None else environ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, arenas))
