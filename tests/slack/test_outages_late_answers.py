"""A click that meets a frozen database: Slack is answered 200 within its 3 s, the person is
told plainly that the answer is not recorded yet, and when the database thaws the answer is
recorded, the person told so, the tool run once and the message updated — never an error shown
for an approval that went through (issue 24, finding 8)."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

from bot import PauseStatus
from channels.slack.late_answers import NOT_RECORDED, NOT_RECORDED_YET, RECORDED_LATE
from channels.slack.render import APPROVE_ACTION
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund


def told(world: SlackWorld) -> list[str]:
    """What the clicker was told, ephemerally."""
    return [
        str(c.payload.get("text", ""))
        for c in world.stub.calls
        if c.method in ("response_url", "chat.postEphemeral")
    ]


async def click_while_frozen(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch, pause_id: str, thaw: asyncio.Event
) -> int:
    answer = world.app.answer

    async def frozen(*args: Any, **kwargs: Any) -> Any:
        await thaw.wait()
        return await answer(*args, **kwargs)

    monkeypatch.setattr(world.app, "answer", frozen)
    click = asyncio.ensure_future(world.click(MANAGER, APPROVE_ACTION, pause_id))
    for _ in range(200):  # Slack's 3 s pass on the App's clock, the database still frozen
        if click.done():
            break
        await world.clock.advance(timedelta(milliseconds=500))
        await asyncio.sleep(0.01)
    assert click.done(), "Slack was not answered while the database was frozen"
    return (await click).status


async def test_a_click_recorded_late_is_told_and_goes_through(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    thaw = asyncio.Event()

    assert await click_while_frozen(world, monkeypatch, pause_id, thaw) == 200
    await world.stub.wait_for("chat.postEphemeral", 1)
    assert told(world) == [NOT_RECORDED_YET]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING

    thaw.set()
    await world.settle()
    assert told(world) == [NOT_RECORDED_YET, RECORDED_LATE]
    assert [name for name, _ in world.ledger.runs] == ["refund"]
    [update] = world.stub.of("chat.update")[:1]
    assert "actions" not in json.dumps(update.payload.get("blocks"))  # buttons gone: answered


async def test_a_click_whose_recording_fails_says_try_again(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    thaw = asyncio.Event()
    answer = world.app.answer

    async def failing(*args: Any, **kwargs: Any) -> Any:
        await thaw.wait()
        raise ConnectionResetError("the database went away")

    assert answer is not None
    monkeypatch.setattr(world.app, "answer", failing)
    click = asyncio.ensure_future(world.click(MANAGER, APPROVE_ACTION, pause_id))
    for _ in range(200):
        if click.done():
            break
        await world.clock.advance(timedelta(milliseconds=500))
        await asyncio.sleep(0.01)
    assert (await click).status == 200
    thaw.set()
    await world.settle()
    assert told(world) == [NOT_RECORDED_YET, NOT_RECORDED]
    assert world.ledger.runs == []
