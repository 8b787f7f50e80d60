"""The work that follows the acks (``channels.slack.tasks``): it never keeps a request being
acked waiting on the database, and it starts in the order the clicks were acked."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Connection

from bot.store.database import Database, sqlite_pragmas
from bot.store.transactions import ThreadedSqliteTransactions
from channels.slack.tasks import DEFAULT_MAX_RUNNING, BackgroundTasks

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


async def _turns(n: int = 10) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_a_request_being_acked_is_not_kept_behind_the_store_calls_work_queued(
    tmp_path: Path,
) -> None:
    """Its store calls (a click's read of the pause and its answer, before the 200) go ahead of
    the calls running work queued; work a request spawns queues its own in turn."""
    async with Database.open(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") as database:
        await database.migrate(NOW)
        tx = ThreadedSqliteTransactions.open(
            database.url.url,
            busy_timeout_s=1,
            on_connect=sqlite_pragmas(timedelta(seconds=1)),
            workers=1,
        )
        tasks = BackgroundTasks()
        ran: list[str] = []
        started, release = threading.Event(), threading.Event()

        def hold(connection: Connection) -> None:
            started.set()
            release.wait(10)

        def note(name: str) -> Callable[[Connection], None]:
            return lambda connection: ran.append(name)

        async def work(name: str) -> None:
            await tx.write(note(name))

        try:
            holding = asyncio.ensure_future(tx.read(hold))  # the one worker busy
            assert await asyncio.to_thread(started.wait, 10)  # the one worker busy: calls queue
            for n in range(3):  # running work queues its calls
                tasks.spawn(work(f"work {n}"), name=f"work {n}")
            await _turns()
            with tasks.gate.acking():  # a click acked: the work after its ack...
                tasks.spawn(work("after a click"), name="after a click")
            await _turns()  # ...starts once no request is being acked, and queues its call
            with tasks.gate.acking():  # the next click reads its pause
                request = asyncio.ensure_future(tx.read(note("a click's read")))
                await _turns()
                release.set()
                await request
            await holding
            await tasks.wait_idle()
        finally:
            release.set()
            await tasks.close(timedelta(seconds=1))
            await tx.close()
        assert ran == ["a click's read", "work 0", "work 1", "work 2", "after a click"]


async def test_the_work_after_a_burst_of_clicks_starts_in_the_order_they_were_acked() -> None:
    tasks = BackgroundTasks(max_running=2)
    started: list[int] = []
    finish = asyncio.Event()

    async def resume(n: int) -> None:
        started.append(n)
        await finish.wait()

    with tasks.gate.acking():  # a burst: every click acked before any work starts
        for n in range(6):
            with tasks.gate.acking():
                tasks.spawn(resume(n), name=f"click {n}")
    await _turns()
    assert started == [0, 1]  # at most max_running at once, the earliest first
    finish.set()
    await tasks.wait_idle()
    assert started == [0, 1, 2, 3, 4, 5]


async def test_a_burst_of_fifty_clicks_runs_its_work_at_once_up_to_the_bound() -> None:
    """The work after an ack mostly waits (the database's threads, Slack): eight at a time
    left 42 clicks of a burst of 50 queued while the process sat half idle."""
    tasks = BackgroundTasks()
    running: list[int] = []
    most = 0
    finish = asyncio.Event()

    async def resume(n: int) -> None:
        nonlocal most
        running.append(n)
        most = max(most, len(running))
        await finish.wait()
        running.remove(n)

    with tasks.gate.acking():
        for n in range(50):
            tasks.spawn(resume(n), name=f"click {n}")
    await _turns()
    assert most == DEFAULT_MAX_RUNNING == 32
    assert sorted(running) == list(range(32))  # the earliest clicks first
    finish.set()
    await tasks.wait_idle()
    assert not running
