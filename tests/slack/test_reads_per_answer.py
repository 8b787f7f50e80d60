"""Data flows down once: a click reads its pause once (inside ``App.answer``) and the message
is updated from the resume event, so nothing climbs back into ``App`` to read the pause again,
and an answer given through the API updates its own message without listing the tenant's; a
question alone in its message is updated without reading which others its message asks (its
reference says it shares none)."""

from __future__ import annotations

from typing import Any

import pytest

from bot import App, PauseStatus
from bot.store.message_refs import SqlMessageRefs
from bot.store.sql import SqlStore
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import all_text, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER
from tests.slack.stub import TEAM
from tests.slack.test_clicks import ask_refund


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> list[str]:
    calls: list[str] = []
    original = getattr(owner, name)

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


async def test_an_approve_click_reads_its_pause_once(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    finds = count_calls(monkeypatch, SqlStore, "find")
    views = count_calls(monkeypatch, App, "find_pause")
    listings = count_calls(monkeypatch, App, "list_pending")

    response = await world.click(MANAGER, APPROVE_ACTION, pause_id)
    assert response.status == 200
    await world.settle()

    assert finds == ["find"]
    assert views == [] and listings == []
    [update] = world.stub.of("chat.update")
    assert f"*Approved* by <@{MANAGER}>" in all_text(update.blocks())
    assert buttons(update.blocks()) == []
    assert [(name, args["amount"]) for name, args in world.ledger.runs] == [("refund", 30.0)]


async def test_an_answer_through_the_api_updates_its_message_without_listing_the_tenant(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    listings = count_calls(monkeypatch, App, "list_pending")
    views = count_calls(monkeypatch, App, "find_pause")

    await world.app.resume(pause_id, decision={"approved": True}, tenant_id=TEAM, answered_by="api")
    await world.settle()

    assert listings == [] and views == []
    [update] = world.stub.of("chat.update")
    assert "*Approved* by <@api>" in all_text(update.blocks()) or "api" in all_text(update.blocks())
    assert buttons(update.blocks()) == []
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.TAKEN


async def test_a_lone_question_s_update_reads_no_other_question_of_its_message(
    world: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause_id = await ask_refund(world)
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and not ref.shared
    in_thread = count_calls(monkeypatch, SqlMessageRefs, "in_thread")
    gets = count_calls(monkeypatch, SqlMessageRefs, "get")
    together = count_calls(monkeypatch, SqlMessageRefs, "get_each")

    await world.click(MANAGER, APPROVE_ACTION, pause_id)
    await world.settle()

    assert in_thread == []  # no turn lookup: the reference said it asks this question only
    assert gets == [] and together == ["get_each"]  # its reference and its escalated copy's
    [update] = world.stub.of("chat.update")
    assert f"*Approved* by <@{MANAGER}>" in all_text(update.blocks())
