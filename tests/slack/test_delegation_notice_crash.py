"""A delegation notice is never lost in a crash, and still said once: a process that dies
between taking the telling of a delegation's start (or end) and owing the delegate's direct
message leaves it to the serving bot's sweep; one that dies after owing it and before recording
it told has it told again, and the delegate's messages are looked at first (its mark found: no
second message; a lookup Slack refuses for good posts it all the same). On a SQLite file and
on PostgreSQL, as signed requests against the stub."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from bot import Settings
from bot.runtime.handovers import TELLING_HOLD
from bot.runtime.sweeps import SWEEP_INTERVAL
from channels.kit.texts import delegation_ended
from channels.slack.render import mention
from channels.slack.render_delegations import END_DELEGATION_ACTION
from tests.databases import BACKENDS, TEST_ENCRYPTION_KEYS, database
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import MANAGER, STRANGER
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_home_delegations import WEEK, _dms_to

KEYED = Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS)


class Died(BaseException):
    """The process dies here: nothing after this line of the telling runs."""


@pytest.fixture(params=BACKENDS)
async def crashing(
    request: pytest.FixtureRequest, stub: SlackStub, tmp_path: Path
) -> AsyncIterator[SlackWorld]:
    async with (
        database(request.param, tmp_path) as url,
        open_world(stub, url, settings=KEYED) as world,
    ):
        yield world


def _dies_once(monkeypatch: pytest.MonkeyPatch, target: object, name: str) -> None:
    """``target.name`` dies the first time it is called, and works after."""
    original: Callable[..., Awaitable[Any]] = getattr(target, name)

    async def dying(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(target, name, original)
        raise Died()

    monkeypatch.setattr(target, name, dying)


async def _sweep_after_the_hold(world: SlackWorld) -> None:
    await world.clock.advance(TELLING_HOLD + SWEEP_INTERVAL)
    await world.settle()
    await world.clock.advance(SWEEP_INTERVAL)  # a second sweep says nothing more
    await world.settle()


async def test_a_start_whose_teller_died_before_owing_it_is_told_by_the_sweep(
    crashing: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = crashing
    _dies_once(monkeypatch, world.bot.gateway.outbox, "owe")  # between the take and the owing
    with pytest.raises(Died):
        await world.app.delegate(tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=WEEK)
    assert _dms_to(world, STRANGER) == []

    await _sweep_after_the_hold(world)

    [told] = _dms_to(world, STRANGER)
    assert told.startswith(f"<@{MANAGER}> hands you their questions for ")


async def test_an_end_whose_teller_died_before_owing_it_is_told_by_the_sweep(
    crashing: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = crashing
    made = await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=WEEK
    )
    await world.settle()
    _dies_once(monkeypatch, world.bot.gateway.outbox, "owe")
    await world.click(MANAGER, END_DELEGATION_ACTION, made.delegation_id, home=True)
    await world.settle()
    assert await world.app.list_delegations(tenant_id=TEAM) == []  # ended all the same
    assert delegation_ended(mention(MANAGER)) not in _dms_to(world, STRANGER)

    await _sweep_after_the_hold(world)

    assert _dms_to(world, STRANGER).count(delegation_ended(mention(MANAGER))) == 1


async def test_a_notice_owed_by_a_teller_that_died_before_recording_it_is_said_once(
    crashing: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = crashing
    delegations = world.app._runtime.delegations
    _dies_once(monkeypatch, delegations, "mark_told")  # between the owing and the record
    with pytest.raises(Died):
        await world.app.delegate(tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=WEEK)
    [told] = _dms_to(world, STRANGER)  # said at once

    await _sweep_after_the_hold(world)

    assert _dms_to(world, STRANGER) == [told]  # told again, found: never said twice
    assert world.stub.of("conversations.history")  # it looked before saying it
    assert await delegations.untold(world.clock.now(), limit=10) == []


async def test_a_notice_told_again_is_posted_when_slack_refuses_the_lookup_for_good(
    crashing: SlackWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look before a second telling fails for good (a scope missing): the notice is
    posted all the same, never dropped."""
    world = crashing
    world.stub.errors["conversations.open"] = "missing_scope"
    _dies_once(monkeypatch, world.bot.gateway.outbox, "owe")
    with pytest.raises(Died):
        await world.app.delegate(tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=WEEK)

    await _sweep_after_the_hold(world)

    assert world.stub.of("conversations.open")  # it looked, and was refused
    [told] = _dms_to(world, STRANGER)
    assert told.startswith(f"<@{MANAGER}> hands you their questions for ")
