"""``python -m bot serve`` with tracemalloc on, dumping what it holds on ``SIGUSR1``.

    SOAK_PROBE_DIR=/some/folder python -m tests.benchmarks.soak_probe

Run by ``python -m tests.benchmarks.server_soak --diagnose`` in place of ``python -m bot serve``.
Each ``SIGUSR1`` collects, then writes into ``SOAK_PROBE_DIR``: ``snapN.tracemalloc`` (a
tracemalloc snapshot, ``SOAK_PROBE_FRAMES`` frames deep; none with ``0``, tracemalloc off),
``typesN.json`` (the count of live objects by type, from ``gc.get_objects()``), ``nativeN.json``
(what tracemalloc cannot see: SQLite's own heap, ``sqlite3_memory_used``; glibc's heap in use
and free, ``mallinfo2``; the threads) and, last, ``snapN.done``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import itertools
import json
import os
import signal
import sys
import threading
import tracemalloc
from collections import Counter
from pathlib import Path
from types import FrameType

from bot.cli.main import main as bot_main

DIR_SETTING = "SOAK_PROBE_DIR"
FRAMES_SETTING = "SOAK_PROBE_FRAMES"
TRIM_SETTING = "SOAK_PROBE_TRIM_SECONDS"
"""An experiment: ``malloc_trim(0)`` every so many seconds, from a thread of the probe's."""


def _type_of(thing: object) -> str:
    kind = type(thing)
    return f"{kind.__module__}.{kind.__qualname__}"


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def native() -> dict[str, int]:
    """SQLite's heap, glibc's heap (in use, free), mmapped blocks, threads: in bytes."""
    import sqlite3  # loads the libsqlite3 the server's connections use

    found: dict[str, int] = {"threads": len(os.listdir("/proc/self/task"))}
    library = ctypes.util.find_library("sqlite3")
    if sqlite3.sqlite_version and library is not None:
        memory_used = ctypes.CDLL(library).sqlite3_memory_used
        memory_used.restype = ctypes.c_int64
        found["sqlite_heap"] = int(memory_used())
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    found |= {"malloc_in_use": info.uordblks, "malloc_free": info.fordblks}
    found |= {"malloc_arena": info.arena, "mmapped": info.hblkhd}
    return found


def main() -> int:
    folder = Path(os.environ[DIR_SETTING])
    frames = int(os.environ.get(FRAMES_SETTING, "10"))
    if frames:
        tracemalloc.start(frames)
    numbers = itertools.count()

    def dump(_signal: int, _frame: FrameType | None) -> None:
        n = next(numbers)
        gc.collect()
        if frames:
            tracemalloc.take_snapshot().dump(str(folder / f"snap{n}.tracemalloc"))
        (folder / f"native{n}.json").write_text(json.dumps(native()))
        types = Counter(_type_of(thing) for thing in gc.get_objects())
        (folder / f"types{n}.json").write_text(json.dumps(types))
        (folder / f"snap{n}.done").touch()

    signal.signal(signal.SIGUSR1, dump)
    trim_every = float(os.environ.get(TRIM_SETTING, "0"))
    if trim_every:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        stop = threading.Event()

        def trim() -> None:
            while not stop.wait(trim_every):
                libc.malloc_trim(0)

        threading.Thread(target=trim, daemon=True).start()
    return bot_main(["serve"])


if __name__ == "__main__":
    sys.exit(main())
