"""A click on a run started outside Slack records the run's end told in the write that closes
its message's references (``ExecutionResumeEvent.end_told``), not in a write of its own: a
process that dies before that write leaves the end untold, and the sweep tells it again (the
message updated again, then closed and told, once); one that dies where the App's own write
of it was (now never made) leaves nothing to tell again. A run whose end is said in its Slack
thread after the close is not recorded told by the close."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from bot.runtime.sweeps import SWEEP_INTERVAL, TELL_GRACE
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import all_text
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER
from tests.slack.test_clicks import ask_refund
from tests.slack.test_notes import THREAD, ask_refund_in_thread


class Died(BaseException):
    """The process dies here: nothing after this line of the telling runs."""


def _dies_once(monkeypatch: pytest.MonkeyPatch, target: object, name: str) -> None:
    """``target.name`` dies the first time it is called, and works after."""
    original: Callable[..., Awaitable[Any]] = getattr(target, name)

    async def dying(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(target, name, original)
        raise Died()

    monkeypatch.setattr(target, name, dying)


def _approved_updates(world: SlackWorld) -> list[str]:
    shown = (all_text(m.blocks()) for m in world.stub.of("chat.update"))
    return [text for text in shown if f"*Approved* by <@{MANAGER}>" in text]


async def _untold(world: SlackWorld) -> list[str]:
    """The runs whose end is not recorded told (ended a minute from now or before)."""
    later = world.clock.now() + timedelta(minutes=1)
    return [r.execution_id for r in await world.app._runtime.store.untold_roots(later)]


async def _sweeps(world: SlackWorld) -> None:
    await world.clock.advance(TELL_GRACE + SWEEP_INTERVAL)
    await world.settle()


async def test_a_process_dying_between_the_update_and_the_close_tells_the_end_again(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    _dies_once(monkeypatch, world.bot.gateway.messages, "close")  # after Slack's update

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    assert len(_approved_updates(world)) == 1  # shown, then the process died
    assert len(await _untold(world)) == 1  # neither closed nor told

    await _sweeps(world)

    assert len(_approved_updates(world)) == 2  # told again: the message brought up to date
    assert await _untold(world) == []
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.closed
    await _sweeps(world)
    assert len(_approved_updates(world)) == 2  # and once only
    assert len(world.ledger.runs) == 1  # the tool ran once


async def test_the_end_is_told_by_the_close_and_the_app_writes_no_mark_of_its_own(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    _dies_once(monkeypatch, world.app._runtime.store, "mark_told")  # never reached

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()

    assert await _untold(world) == []  # told, with the close
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.closed
    await _sweeps(world)
    assert len(_approved_updates(world)) == 1


async def test_an_end_said_in_its_thread_is_not_told_by_the_close_before_it_is_said(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run started in a Slack thread has its end said there after the references close: a
    process that dies between the close and the end owed leaves the end untold (the close did
    not record it told), and the sweep says it, once."""
    pause_id = await ask_refund_in_thread(world)
    _dies_once(monkeypatch, world.bot.gateway.outbox, "post")  # the end, not yet owed

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.closed  # closed, then the process died
    assert _ends_said(world) == 0
    assert len(await _untold(world)) == 1

    await _sweeps(world)
    await _sweeps(world)

    assert _ends_said(world) == 1
    assert await _untold(world) == []


def _ends_said(world: SlackWorld) -> int:
    posts = world.stub.of("chat.postMessage")
    return sum(
        1
        for m in posts
        if m.payload.get("thread_ts") == THREAD.ts and m.payload.get("text") == "refund done"
    )
