"""A pause cycle on a SQLite file hands nothing to the event loop's default executor.

Each hand-off to a thread and back costs the cycle a thread's waking and the GIL passed twice
(issue 32): the store's short calls run on the loop (``bot.store.transactions``), LangGraph's
checkpoints on the saver's own thread (``bot.runtime.sqlite_saver``), and the agent's edge
functions are coroutines, which LangGraph awaits (a plain function it would run in the default
executor, once per model turn)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.benchmarks.cycle_cost import bench_app, pay_cycle
from tests.benchmarks.resume_throughput import Inbox


class _Refusing(concurrent.futures.ThreadPoolExecutor):
    """A default executor that records what is handed to it and refuses it."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.handed: list[str] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        self.handed.append(repr(args[0] if args else fn)[:200])
        raise RuntimeError("a hand-off to the default executor")


async def test_a_pause_cycle_hands_nothing_to_the_default_executor(tmp_path: Path) -> None:
    inbox = Inbox()
    async with bench_app(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}", inbox) as app:
        await pay_cycle(app, inbox, "warm")  # opening and migrating may use threads
        refusing = _Refusing()
        loop = asyncio.get_running_loop()
        loop.set_default_executor(refusing)
        try:
            for n in range(3):
                await pay_cycle(app, inbox, f"n{n}")
        finally:
            loop.set_default_executor(concurrent.futures.ThreadPoolExecutor())
        assert refusing.handed == []
