"""``python -m bot serve`` with tracemalloc on, dumping what it holds on ``SIGUSR1``.

    SOAK_PROBE_DIR=/some/folder python -m tests.benchmarks.soak_probe

Run by ``python -m tests.benchmarks.server_soak --diagnose`` in place of ``python -m bot serve``.
Each ``SIGUSR1`` collects, then writes into ``SOAK_PROBE_DIR``: ``snapN.tracemalloc`` (a
tracemalloc snapshot, ``SOAK_PROBE_FRAMES`` frames deep), ``typesN.json`` (the count of live
objects by type, from ``gc.get_objects()``) and, last, ``snapN.done``.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import signal
import sys
import tracemalloc
from collections import Counter
from pathlib import Path
from types import FrameType

from bot.cli.main import main as bot_main

DIR_SETTING = "SOAK_PROBE_DIR"
FRAMES_SETTING = "SOAK_PROBE_FRAMES"


def _type_of(thing: object) -> str:
    kind = type(thing)
    return f"{kind.__module__}.{kind.__qualname__}"


def main() -> int:
    folder = Path(os.environ[DIR_SETTING])
    tracemalloc.start(int(os.environ.get(FRAMES_SETTING, "10")))
    numbers = itertools.count()

    def dump(_signal: int, _frame: FrameType | None) -> None:
        n = next(numbers)
        gc.collect()
        tracemalloc.take_snapshot().dump(str(folder / f"snap{n}.tracemalloc"))
        types = Counter(_type_of(thing) for thing in gc.get_objects())
        (folder / f"types{n}.json").write_text(json.dumps(types))
        (folder / f"snap{n}.done").touch()

    signal.signal(signal.SIGUSR1, dump)
    return bot_main(["serve"])


if __name__ == "__main__":
    sys.exit(main())
