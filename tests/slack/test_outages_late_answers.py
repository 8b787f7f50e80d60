"""A click that meets a frozen database: Slack is answered 200 within its 3 s, the person is
told plainly that the answer is not recorded yet, and when the database thaws the answer is
recorded, the person told so, the tool run once and the message updated — never an error shown
for an approval that went through (issue 24, finding 8). A modal submitted then (a reject's
reason, an edit) is handled the same way: never Bolt's 404."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

from bot import PauseStatus
from channels.slack.late_answers import NOT_RECORDED, NOT_RECORDED_YET, RECORDED_LATE
from channels.slack.render import APPROVE_ACTION, EDIT_ACTION, REJECT_ACTION
from tests.slack.checks import all_text, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund
from tests.slack.test_modals import edits, open_modal, reason


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


async def submit_while_frozen(
    world: SlackWorld,
    monkeypatch: pytest.MonkeyPatch,
    view: dict[str, Any],
    values: dict[str, Any],
    thaw: asyncio.Event,
) -> tuple[int, str]:
    """Submit a modal while the database is frozen: the edit's check (its read of the pause)
    and the answer wait for ``thaw``."""
    flows = world.bot.services.flows
    for owner, name in ((world.app, "answer"), (flows, "check_edit")):
        real = getattr(owner, name)

        async def frozen(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            await thaw.wait()
            return await _real(*args, **kwargs)

        monkeypatch.setattr(owner, name, frozen)
    submit = asyncio.ensure_future(world.submit(MANAGER, view, values))
    for _ in range(200):
        if submit.done():
            break
        await world.clock.advance(timedelta(milliseconds=500))
        await asyncio.sleep(0.01)
    assert submit.done(), "Slack was not answered while the database was frozen"
    response = await submit
    return response.status, await response.text()


async def test_a_reject_modal_recorded_late_is_told_and_goes_through(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, REJECT_ACTION, pause_id)
    thaw = asyncio.Event()

    status, body = await submit_while_frozen(world, monkeypatch, view, reason("too much"), thaw)
    assert (status, body) == (200, "")  # the modal closes; never Bolt's 404
    await world.stub.wait_for("chat.postEphemeral", 1)
    assert told(world) == [NOT_RECORDED_YET]

    thaw.set()
    await world.settle()
    assert told(world) == [NOT_RECORDED_YET, RECORDED_LATE]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.decision is not None
    assert (pause.decision.approved, pause.decision.reason) == (False, "too much")
    [update] = world.stub.of("chat.update")
    assert "too much" in all_text(update.blocks()) and buttons(update.blocks()) == []
    assert world.ledger.runs == []


async def test_an_edit_modal_checked_and_recorded_late_runs_with_the_edit(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, EDIT_ACTION, pause_id)
    thaw = asyncio.Event()

    status, body = await submit_while_frozen(world, monkeypatch, view, edits("7", "15"), thaw)
    assert (status, body) == (200, "")
    await world.stub.wait_for("chat.postEphemeral", 1)

    thaw.set()
    await world.settle()
    assert told(world) == [NOT_RECORDED_YET, RECORDED_LATE]
    [(name, ran_with)] = world.ledger.runs
    assert name == "refund" and ran_with["amount"] == 15.0


async def test_an_edit_found_invalid_late_is_not_recorded_and_says_try_again(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    view = await open_modal(world, EDIT_ACTION, pause_id)
    thaw = asyncio.Event()

    status, _ = await submit_while_frozen(world, monkeypatch, view, edits("7", "-5"), thaw)
    assert status == 200
    thaw.set()
    await world.settle()
    assert told(world) == [NOT_RECORDED_YET, NOT_RECORDED]
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert world.ledger.runs == []
