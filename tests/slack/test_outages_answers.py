"""Every way of answering from Slack while every Slack Web API call fails (refused connections,
500s): answered 200, never 5xx. An approver named in the channel has their answer recorded; a
member of an approvers' user group (which only Slack can list) is not refused for it either:
nothing is recorded, and they are told to try again (issue 24, "no click is acknowledged and
dropped").

Each path: a click (one approval; the second of three), a modal's submission (Reject's reason),
a thread reply, ``/pending``'s Approve all, and Reassign's submission. What needs Slack to
start (the modal, the list) is opened before the outage.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientResponse

from bot import PauseStatus
from channels.kit.texts import APPROVERS_NOT_CHECKED
from channels.slack.approvers import DEFAULT_TTL, UNKNOWN_FOR
from channels.slack.button_values import read_answer_value
from channels.slack.render import APPROVE_ACTION, APPROVE_ALL_ACTION, REJECT_ACTION
from channels.slack.render_approvals import REASSIGN_BLOCK
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import ACCOUNTANT, FINANCE, MANAGER, OWNER, STRANGER
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_batches import approve_all_of
from tests.slack.test_clicks import ask_refund
from tests.slack.test_handing_on import choose_reassign, chosen
from tests.slack.test_lists import ask_many_refunds, pending_of
from tests.slack.test_messages import FIRST_POST
from tests.slack.test_modals import reason
from tests.slack.test_outages_approvals import THREE_EYES, ThreeEyesAgent
from tests.slack.test_outages_approvals import _asked as ask_three_eyes

KINDS = ["refused", "500"]
GROUP_LOOKUP_EXPIRED = DEFAULT_TTL + timedelta(minutes=1)
"""Past the cache of a group's members: the answer needs Slack to list them again."""


@dataclass
class Asked:
    """What a path asked (and opened) while Slack answered, and how it answers in the outage."""

    pause_ids: list[str]
    answer: Callable[[str], Awaitable[ClientResponse]]


async def _click(world: SlackWorld, by: str) -> Asked:
    pause_id = await ask_refund(world)
    return Asked([pause_id], lambda user: world.click(user, APPROVE_ACTION, pause_id))


async def _modal(world: SlackWorld, by: str) -> Asked:
    pause_id = await ask_refund(world)
    assert (await world.click(by, REJECT_ACTION, pause_id)).status == 200
    await world.settle()
    view = world.stub.of("views.open")[-1].view()
    return Asked([pause_id], lambda user: world.submit(user, view, reason("too much")))


async def _reply(world: SlackWorld, by: str) -> Asked:
    pause_id = await ask_refund(world)
    return Asked([pause_id], lambda user: world.message(user, "approve", thread_ts=FIRST_POST))


async def _approve_all(world: SlackWorld, by: str) -> Asked:
    ids = await ask_many_refunds(world, 3)
    value = str(approve_all_of(await pending_of(world, by))["value"])
    return Asked(ids, lambda user: world.click(user, APPROVE_ALL_ACTION, value, ephemeral=True))


async def _reassign(world: SlackWorld, by: str) -> Asked:
    pause_id = await ask_refund(world)
    view = await choose_reassign(world, by, pause_id)
    return Asked([pause_id], lambda user: world.submit(user, view, chosen(STRANGER)))


PATHS: dict[str, Callable[[SlackWorld, str], Awaitable[Asked]]] = {
    "click": _click,
    "modal": _modal,
    "reply": _reply,
    "approve all": _approve_all,
    "reassign": _reassign,
}


@pytest.fixture
async def office(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    async with open_world(stub, f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}") as world:
        world.stub.groups[FINANCE] = [ACCOUNTANT]
        await _served_before(world)
        yield world


async def _served_before(world: SlackWorld) -> None:
    """The bot has served Slack before the outage (it knows its own ids: ``auth.test``), as a
    running bot has; a bot started during an outage is ``test_outages_authorization``'s."""
    assert (await world.message(OWNER, "good morning", channel="C0GENERAL")).status == 200
    await world.settle()


async def _answered(world: SlackWorld, asked: Asked | list[str]) -> list[bool]:
    """Whether each question has an answer (or a handover) recorded."""
    answered = []
    for pause_id in asked.pause_ids if isinstance(asked, Asked) else asked:
        pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
        assert pause is not None
        answered.append(pause.status is not PauseStatus.PENDING or bool(pause.handovers))
    return answered


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("kind", KINDS)
async def test_a_named_approvers_answer_is_recorded_while_slack_fails(
    office: SlackWorld, path: str, kind: str
) -> None:
    world = office
    asked = await PATHS[path](world, MANAGER)
    await world.stub.fail_all(kind)

    response = await asked.answer(MANAGER)
    assert response.status == 200
    assert (await response.text()) in ("", "null")  # acknowledged: no modal error either
    await world.settle()
    assert all(await _answered(world, asked))
    if path in ("click", "reply", "approve all"):
        assert len(world.ledger.runs) == len(asked.pause_ids)  # approved: each tool ran once


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("kind", KINDS)
async def test_a_group_members_answer_slack_cannot_check_is_not_taken_and_not_refused(
    office: SlackWorld, path: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    world = office
    asked = await PATHS[path](world, ACCOUNTANT)
    await world.clock.advance(GROUP_LOOKUP_EXPIRED)
    await world.stub.fail_all(kind)

    with caplog.at_level(logging.WARNING):
        response = await asked.answer(ACCOUNTANT)
        assert response.status == 200
        said = await response.text()
        await world.settle()
    assert not any(await _answered(world, asked))
    assert world.ledger.runs == []
    if path == "reassign":  # said in the modal, which stays open: no Slack call needed
        assert _json(said)["errors"][REASSIGN_BLOCK] == APPROVERS_NOT_CHECKED
    assert "could not be read for now" in caplog.text

    await world.stub.restore()  # Slack back: the same answer is taken
    await world.clock.advance(GROUP_LOOKUP_EXPIRED)
    assert (await asked.answer(ACCOUNTANT)).status == 200
    await world.settle()
    assert all(await _answered(world, asked))


async def test_told_to_try_again_when_only_the_group_lookup_fails(office: SlackWorld) -> None:
    world = office
    pause_id = await ask_refund(world)
    await world.clock.advance(GROUP_LOOKUP_EXPIRED)
    await world.stub.fail_all("500", "usergroups.users.list")

    assert (await world.click(ACCOUNTANT, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    told = [(c.payload["user"], c.payload["text"]) for c in world.stub.of("chat.postEphemeral")]
    assert told == [(ACCOUNTANT, APPROVERS_NOT_CHECKED)]
    assert world.ledger.runs == []


@pytest.fixture
async def three_eyes(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    async with open_world(
        stub,
        f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        application=(THREE_EYES.application, ThreeEyesAgent, THREE_EYES.workflow),
    ) as world:
        world.stub.groups[FINANCE] = [ACCOUNTANT, OWNER, STRANGER]
        await _served_before(world)
        yield world


@pytest.mark.parametrize("kind", KINDS)
async def test_the_second_of_three_approvals_while_slack_fails_is_never_a_500(
    three_eyes: SlackWorld, kind: str
) -> None:
    world = three_eyes
    value = await ask_three_eyes(world)  # the pause id and the proposal shown
    pause_id = read_answer_value(value).pause_id
    await world.clock.advance(GROUP_LOOKUP_EXPIRED)
    await world.stub.fail_all(kind)

    assert (await world.click(MANAGER, APPROVE_ACTION, value)).status == 200  # counted
    assert (await world.click(STRANGER, APPROVE_ACTION, value)).status == 200  # unchecked
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and pause.status is PauseStatus.PENDING
    assert [a.by for a in pause.approvals] == [MANAGER]

    await world.stub.restore()
    await world.clock.advance(UNKNOWN_FOR)  # the failed look-up is asked again
    assert (await world.click(STRANGER, APPROVE_ACTION, value)).status == 200
    await world.settle()
    pause = await world.app.find_pause(pause_id, tenant_id=TEAM)
    assert pause is not None and [a.by for a in pause.approvals] == [MANAGER, STRANGER]


def _json(text: str) -> dict[str, Any]:
    loaded = json.loads(text)
    assert isinstance(loaded, dict)
    return loaded


@pytest.mark.parametrize("kind", ["hang", "500", "refused"])
async def test_an_ephemeral_reply_slack_fails_is_logged_and_never_raised(
    stub: SlackStub, tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    async with open_world(stub, url, api_timeout_seconds=0.5) as world:
        await _served_before(world)
        pause_id = await ask_refund(world)
        await world.stub.fail_all(kind, "chat.postEphemeral", "response_url")

        with caplog.at_level(logging.WARNING):
            response = await world.click(STRANGER, APPROVE_ACTION, pause_id)  # refused: told
            assert response.status == 200
            await world.settle()
            listed = await world.command(MANAGER)  # the list, through its response_url
            assert listed.status == 200
            await world.settle()
            await world.stub.restore()
        assert "could not tell user U0STRANGER something" in caplog.text
        assert "the pending list was not sent" in caplog.text
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert world.ledger.runs == []


async def test_a_modal_slack_drops_is_logged_and_never_raised(
    office: SlackWorld, caplog: pytest.LogCaptureFixture
) -> None:
    world = office
    pause_id = await ask_refund(world)
    await world.stub.fail_all("reset", "views.open")  # the connection dropped, unanswered

    with caplog.at_level(logging.WARNING):
        assert (await world.click(MANAGER, REJECT_ACTION, pause_id)).status == 200
        await world.settle()
    assert "the reject modal did not open" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not any(await _answered(world, [pause_id]))


async def test_a_rate_limited_group_lookup_before_the_ack_never_waits_on_retry_after(
    office: SlackWorld,
) -> None:
    """Under a 429 outage the look-up an answer needs is asked once, not retried after
    ``Retry-After`` before the ack (Slack's 3 s would pass): the person is told to try again at
    once, and the group is not asked again before its ``Retry-After``."""
    world = office
    pause_id = await ask_refund(world)
    await world.clock.advance(GROUP_LOOKUP_EXPIRED)
    await world.stub.fail_all("429", "usergroups.users.list", retry_after=30)

    assert (await world.click(ACCOUNTANT, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    lookups = world.stub.failed
    assert lookups == ["usergroups.users.list"]  # once: no retry before the ack
    await world.clock.advance(UNKNOWN_FOR + timedelta(seconds=5))  # within its Retry-After
    assert (await world.click(ACCOUNTANT, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    assert lookups == ["usergroups.users.list"]  # not asked again yet
    told = [c.payload["text"] for c in world.stub.of("chat.postEphemeral")]
    assert told == [APPROVERS_NOT_CHECKED, APPROVERS_NOT_CHECKED]
    assert not any(await _answered(world, [pause_id]))

    await world.stub.restore()
    await world.clock.advance(timedelta(seconds=30))  # its Retry-After passed: asked again
    assert (await world.click(ACCOUNTANT, APPROVE_ACTION, pause_id)).status == 200
    await world.settle()
    assert all(await _answered(world, [pause_id]))
