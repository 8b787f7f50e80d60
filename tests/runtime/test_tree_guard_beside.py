"""Work beside the passes (``TreeGuard.try_hold``: the sweep's reminders and escalations)
never waits for a pass, including one about to start: a lock just handed to a waiter."""

from __future__ import annotations

import asyncio

from bot.runtime.tree_guard import TreeGuard
from bot.store.memory import MemoryLeases
from bot.testing import FakeClock


async def test_work_beside_does_not_wait_behind_a_pass_the_lock_was_just_handed_to() -> None:
    guard = TreeGuard(MemoryLeases(), FakeClock(), owner="instance-a")
    lock = guard.lock("root-1")
    await lock.acquire()  # a pass holds the tree here
    passing = asyncio.Event()
    finish = asyncio.Event()

    async def next_pass() -> None:
        async with lock:  # waits for the tree, then runs a long pass
            passing.set()
            await finish.wait()

    go = asyncio.Event()

    async def beside() -> bool:
        await go.wait()
        async with guard.try_hold("root-1") as held:
            return held

    waiter = asyncio.create_task(next_pass())
    attempt = asyncio.create_task(beside())
    await asyncio.sleep(0)  # the next pass waits for the lock, the work beside for ``go``
    go.set()  # the work beside wakes first...
    lock.release()  # ...to a lock handed to the next pass: not locked(), yet not free
    await passing.wait()
    for _ in range(5):
        await asyncio.sleep(0)
    try:
        assert attempt.done(), "the work beside waited for the pass"
        assert attempt.result() is False
    finally:
        finish.set()
        await asyncio.gather(waiter, attempt)
