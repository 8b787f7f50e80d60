"""The work that follows the acks (``channels.slack.tasks``): it never keeps a request being
acked waiting on the database, and it starts in the order the clicks were acked."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Connection

from bot import ExecutionResumeEvent, ExecutionStatus, PauseAnswerer
from bot.store.database import Database, sqlite_pragmas
from bot.store.transactions import ThreadedSqliteTransactions
from bot.testing import call_tool
from channels.slack.home import Answerable
from channels.slack.render import APPROVE_ACTION
from channels.slack.tasks import DEFAULT_MAX_RUNNING, BackgroundTasks
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, OWNER, RefundCardTool
from tests.slack.stub import TEAM

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


async def test_every_click_of_a_burst_is_told_to_the_resume_hooks_once(world: SlackWorld) -> None:
    """``App.on_execution_resume`` is public: each answer of a burst of clicks, continued after
    its ack, is in the event of exactly one move (the benchmark once counted 38 of 50: its own
    bookkeeping, not a path that continued a run untold)."""
    told: list[str] = []

    def resumed(event: ExecutionResumeEvent) -> None:
        told.extend(pause.pause_id for pause in event.answered)

    world.app.on_execution_resume(resumed)
    for n in range(12):
        world.llm.then_return(call_tool(RefundCardTool, {"order_id": str(n), "amount": 1.0}))
    for n in range(12):
        assert (await world.execute(f"refund {n}")).status is ExecutionStatus.PAUSED
    world.llm.then_return(*(["done"] * 12))
    pending = await world.app.list_pending(tenant_id=TEAM, include_channel_pause_ids=True)
    pause_ids = [p.pause_id for p in pending if p.pause_id is not None]
    assert len(pause_ids) == 12

    responses = await asyncio.gather(
        *(world.click(MANAGER, APPROVE_ACTION, pause_id) for pause_id in pause_ids)
    )
    await world.settle()

    assert [r.status for r in responses] == [200] * 12
    assert sorted(told) == sorted(pause_ids)
    assert len(world.ledger.runs) == 12


async def test_work_that_can_wait_starts_after_the_clicks_waiting_for_a_slot() -> None:
    tasks = BackgroundTasks(max_running=1)
    started: list[str] = []
    finish = asyncio.Event()

    async def piece(name: str) -> None:
        started.append(name)
        await finish.wait()

    tasks.spawn(piece("click 1"), name="click 1")
    tasks.spawn(piece("a Home"), name="a Home", later=True)
    tasks.spawn(piece("click 2"), name="click 2")
    await _turns()
    assert started == ["click 1"]
    finish.set()
    await tasks.wait_idle()
    assert started == ["click 1", "click 2", "a Home"]


async def test_a_home_asked_for_again_and_again_is_shown_once_after_the_one_running() -> None:
    tasks = BackgroundTasks()
    shown: list[int] = []
    state = 0
    showing = asyncio.Event()
    go_on = asyncio.Event()

    async def show() -> None:
        shown.append(state)
        showing.set()
        await go_on.wait()

    with tasks.gate.acking():  # asked five times before it starts: one piece
        for _ in range(5):
            state += 1
            tasks.spawn_once(("home", "T1", "U1"), show, name="home")
    await showing.wait()
    for _ in range(3):  # asked while it runs: the state changed after it read it
        state += 1
        tasks.spawn_once(("home", "T1", "U1"), show, name="home")
    go_on.set()
    await tasks.wait_idle()
    assert shown == [5, 8]


async def test_a_home_asked_for_while_it_runs_follows_no_sooner_than_its_spacing() -> None:
    """Asked again while one publish runs, the next waits ``spacing`` from the first's start,
    outside the slots; asked meanwhile, it is that same piece, showing the state at its
    start."""
    tasks = BackgroundTasks(max_running=1)
    spacing = timedelta(milliseconds=50)
    shown: list[tuple[int, float]] = []
    state = 0
    go_on = asyncio.Event()
    showing = asyncio.Event()
    loop = asyncio.get_running_loop()

    async def show() -> None:
        shown.append((state, loop.time()))
        showing.set()
        await go_on.wait()

    def ask() -> None:
        tasks.spawn_once(("home", "T1", "U1"), show, name="home", spacing=spacing)

    ask()
    await showing.wait()
    state += 1
    ask()  # while it runs: one more piece, spaced
    go_on.set()
    for _ in range(10):  # the first ended: the next one waits its spacing
        await asyncio.sleep(0)
    assert len(shown) == 1
    ran = asyncio.Event()
    tasks.spawn(ran.wait(), name="a click's run")  # the wait holds no slot
    ran.set()
    for _ in range(3):  # asked during the wait: the same piece
        state += 1
        ask()
    await tasks.wait_idle()

    assert [seen for seen, _ in shown] == [0, 4]
    assert shown[1][1] - shown[0][1] >= spacing.total_seconds() - 0.005


async def test_questions_closing_together_republish_their_approvers_home_once(
    world: SlackWorld,
) -> None:
    """Each closed question asks for its approvers' Homes (``SlackBot._on_message_closed``):
    asked twelve times before it could start, a person's Home is published once, showing
    the state when it runs."""
    await world.event({"type": "app_home_opened", "user": MANAGER, "tab": "home"})
    await world.settle()
    published = len(world.stub.of("views.publish"))
    closed = Answerable(
        answered_by=PauseAnswerer.CHANNEL, role="refunds", owner_id=OWNER, approvers=(MANAGER,)
    )

    for _ in range(12):
        world.bot.services.home.refresh(TEAM, [closed])
    await world.settle()

    assert len(world.stub.of("views.publish")) - published == 1


async def test_work_cancelled_while_it_waits_for_a_slot_leaves_the_slots_whole() -> None:
    tasks = BackgroundTasks(max_running=1)
    started: list[str] = []
    finish = asyncio.Event()

    async def piece(name: str) -> None:
        started.append(name)
        await finish.wait()

    tasks.spawn(piece("first"), name="first")
    waiting = [tasks.spawn(piece(f"cancelled {n}"), name="cancelled") for n in range(2)]
    await _turns()
    for task in waiting:
        assert task is not None
        task.cancel()
    finish.set()  # the first ends: its slot is freed as the cancelled ones leave
    await _turns()
    tasks.spawn(piece("next"), name="next")
    await tasks.wait_idle()
    assert started == ["first", "next"]
