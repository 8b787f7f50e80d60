"""The after-ack work's lanes: a run moved on by an answer takes the next free place before
work that can wait, and a cancelled waiter never keeps a place."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from channels.slack.tasks import BackgroundTasks, Lane, _Places


async def _settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_an_answer_goes_before_work_that_can_wait() -> None:
    tasks = BackgroundTasks(max_running=1)
    release = asyncio.Event()
    order: list[str] = []

    async def holding() -> None:
        await release.wait()
        order.append("holding")

    async def piece(name: str) -> None:
        order.append(name)

    tasks.spawn(holding(), name="holding")
    await _settle()
    tasks.spawn(piece("home 1"), name="home 1")
    tasks.spawn(piece("home 2"), name="home 2")
    tasks.spawn(piece("answer 1"), name="answer 1", lane=Lane.ANSWER)
    tasks.spawn(piece("answer 2"), name="answer 2", lane=Lane.ANSWER)
    await _settle()
    release.set()
    await tasks.wait_idle()

    assert order == ["holding", "answer 1", "answer 2", "home 1", "home 2"]


async def test_an_answer_goes_first_in_the_busy_lane_too() -> None:
    tasks = BackgroundTasks(max_running=4)
    release = asyncio.Event()
    order: list[str] = []

    async def holding() -> None:
        await release.wait()
        order.append("holding")

    async def piece(name: str) -> None:
        order.append(name)

    with tasks.gate.acking():  # acks keep coming: past its patience, one piece at a time
        tasks.gate._patience = 0.0
        tasks.spawn(holding(), name="holding")
        await _settle()
        tasks.spawn(piece("home"), name="home")
        tasks.spawn(piece("answer"), name="answer", lane=Lane.ANSWER)
        for _ in range(5):
            await asyncio.sleep(0.001)  # each has waited its (zero) patience
        release.set()
        await tasks.wait_idle()

    assert order == ["holding", "answer", "home"]


async def test_a_cancelled_waiter_keeps_no_place() -> None:
    tasks = BackgroundTasks(max_running=1)
    release = asyncio.Event()
    ran: list[str] = []

    async def holding() -> None:
        await release.wait()

    async def piece(name: str) -> None:
        ran.append(name)

    tasks.spawn(holding(), name="holding")
    await _settle()
    waiting = tasks.spawn(piece("cancelled"), name="cancelled", lane=Lane.ANSWER)
    assert waiting is not None
    await _settle()
    waiting.cancel()
    await _settle()
    release.set()
    await tasks.wait_idle()
    tasks.spawn(piece("after"), name="after", lane=Lane.ANSWER)
    tasks.spawn(piece("later"), name="later")
    await tasks.wait_idle()

    assert ran == ["after", "later"]
    await tasks.close(timedelta(seconds=1))


async def test_a_waiter_cancelled_as_it_is_handed_a_place_passes_it_on() -> None:
    places = _Places(1)
    got: list[str] = []

    async def wait_for_place(name: str) -> None:
        async with places.held(Lane.ANSWER):
            got.append(name)

    holding = places.held(Lane.LATER)
    await holding.__aenter__()
    handed = asyncio.create_task(wait_for_place("handed"))
    after = asyncio.create_task(wait_for_place("after"))
    await _settle()
    await holding.__aexit__(None, None, None)  # hands the place to "handed", not yet woken
    handed.cancel()
    await asyncio.gather(handed, after, return_exceptions=True)

    assert got == ["after"]
