import asyncio
from datetime import UTC, timedelta

from bot.testing import FakeClock


async def test_now_is_aware_utc_and_moves_only_when_told() -> None:
    clock = FakeClock()
    before = clock.now()
    assert before.tzinfo is UTC
    await asyncio.sleep(0.01)
    assert clock.now() == before
    await clock.advance(timedelta(seconds=90))
    assert clock.now() == before + timedelta(seconds=90)


async def test_timers_run_when_due_and_long_advances_coalesce() -> None:
    clock = FakeClock()
    runs: list[float] = []
    start = clock.now()

    async def tick() -> None:
        runs.append((clock.now() - start).total_seconds())

    clock.call_every(timedelta(seconds=30), tick)
    await clock.advance(timedelta(seconds=29))
    assert runs == []
    await clock.advance(timedelta(seconds=1))
    assert runs == [30.0]
    await clock.advance(timedelta(days=1))
    assert runs == [30.0, 86430.0]  # once, at the last due time


async def test_sleepers_wake_in_order_between_timer_runs() -> None:
    clock = FakeClock()
    woke: list[str] = []

    async def sleeper(name: str, seconds: int) -> None:
        await clock.sleep(timedelta(seconds=seconds))
        woke.append(name)

    tasks = [asyncio.create_task(sleeper("b", 20)), asyncio.create_task(sleeper("a", 10))]
    await asyncio.sleep(0)
    await clock.advance(timedelta(seconds=15))
    assert woke == ["a"]
    await clock.advance(timedelta(seconds=15))
    await asyncio.gather(*tasks)
    assert woke == ["a", "b"]


async def test_a_cancelled_timer_never_runs() -> None:
    clock = FakeClock()
    runs = 0

    async def tick() -> None:
        nonlocal runs
        runs += 1

    handle = clock.call_every(timedelta(seconds=1), tick)
    handle.cancel()
    await clock.advance(timedelta(seconds=10))
    assert runs == 0
