"""Standing delegations on the App Home, as signed requests against the Web API stub: each
person sees theirs ("You hand your questions to …", with End now) and those to them; End now
ends it (only for its delegator: a forged end changes nothing); the modal starts one, refusing
bad input with the modal kept open; the delegate is told in a direct message when one starts
and when one is ended early."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from bot import Delegation
from bot.runtime.sweeps import SWEEP_INTERVAL
from channels.kit.texts import (
    DELEGATE_MISSING,
    DELEGATE_YOURSELF,
    DELEGATION_END_PAST,
    DELEGATION_NOT_YOURS,
    delegation_ended,
    delegation_started,
)
from channels.slack.render import mention, slack_date
from channels.slack.render_delegations import (
    DELEGATE_BLOCK,
    END_DELEGATION_ACTION,
    START_DELEGATION_ACTION,
    UNTIL_BLOCK,
)
from tests.cli.processes import person_env, python_m_bot
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_lists import home_opened

WEEK = timedelta(days=7)


def _home_of(world: SlackWorld, user: str) -> list[dict[str, Any]]:
    published = [c for c in world.stub.of("views.publish") if c.payload["user_id"] == user]
    return list(published[-1].view()["blocks"])


def _dms_to(world: SlackWorld, user: str) -> list[str]:
    return [
        str(c.payload["text"])
        for c in world.stub.of("chat.postMessage")
        if c.payload["channel"] == user
    ]


def _end_buttons(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(b["value"]) for b in buttons(blocks) if b["action_id"] == END_DELEGATION_ACTION]


async def _delegated(world: SlackWorld) -> Delegation:
    return await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=WEEK
    )


async def test_the_home_lists_a_persons_delegations_and_end_now_ends_theirs(
    world: SlackWorld,
) -> None:
    delegation = await _delegated(world)
    until = slack_date(delegation.ends_at)
    await home_opened(world, MANAGER)
    await home_opened(world, STRANGER)

    mine = _home_of(world, MANAGER)
    assert f"You hand your questions to <@{STRANGER}> until {until}" in all_text(mine)
    assert _end_buttons(mine) == [delegation.delegation_id]
    theirs = _home_of(world, STRANGER)
    assert f"<@{MANAGER}> hands their questions to you until {until}" in all_text(theirs)
    assert _end_buttons(theirs) == []  # only its delegator ends it

    await world.click(MANAGER, END_DELEGATION_ACTION, delegation.delegation_id, home=True)
    await world.settle()
    assert await world.app.list_delegations(tenant_id=TEAM) == []
    assert "You hand your questions" not in all_text(_home_of(world, MANAGER))
    assert _dms_to(world, STRANGER)[-1] == delegation_ended(mention(MANAGER))
    assert_sent_valid(world.stub.calls, set())


async def test_an_end_sent_by_anyone_but_the_delegator_changes_nothing(
    world: SlackWorld,
) -> None:
    delegation = await _delegated(world)

    await world.click(STRANGER, END_DELEGATION_ACTION, delegation.delegation_id, home=True)
    await world.settle()

    assert [d.delegation_id for d in await world.app.list_delegations(tenant_id=TEAM)] == [
        delegation.delegation_id
    ]
    assert _dms_to(world, STRANGER)[-1] == DELEGATION_NOT_YOURS
    assert not any("ended their delegation" in t for t in _dms_to(world, STRANGER))


def _form(to: str | None, until: int | None) -> dict[str, Any]:
    return {
        DELEGATE_BLOCK: {"to": {"type": "users_select", "selected_user": to}},
        UNTIL_BLOCK: {"until": {"type": "datetimepicker", "selected_date_time": until}},
    }


async def _modal(world: SlackWorld, user: str) -> dict[str, Any]:
    await world.click(user, START_DELEGATION_ACTION, "start", home=True)
    await world.settle()
    return world.stub.of("views.open")[-1].view()


async def test_the_home_starts_a_delegation_and_the_delegate_is_told(world: SlackWorld) -> None:
    view = await _modal(world, MANAGER)
    now = world.app.clock.now()
    ends = int((now + timedelta(days=3)).timestamp())

    response = await world.submit(MANAGER, view, _form(STRANGER, ends))
    assert response.status == 200 and await response.text() == ""
    await world.settle()

    [made] = await world.app.list_delegations(tenant_id=TEAM)
    assert (made.delegator, made.delegate, int(made.ends_at.timestamp())) == (
        MANAGER,
        STRANGER,
        ends,
    )
    roles = "granted-refund-approval-channel, refund-approval-channel, wire-approval-channel"
    said = delegation_started(mention(MANAGER), roles, slack_date(made.ends_at))
    assert _dms_to(world, STRANGER) == [said]
    assert f"You hand your questions to <@{STRANGER}>" in all_text(_home_of(world, MANAGER))
    assert_sent_valid(world.stub.calls, set())


async def test_the_modal_refuses_bad_input_and_makes_nothing(world: SlackWorld) -> None:
    view = await _modal(world, MANAGER)
    later = int((world.app.clock.now() + WEEK).timestamp())
    past = int((world.app.clock.now() - timedelta(hours=1)).timestamp())
    cases = [
        (_form(None, later), {DELEGATE_BLOCK: DELEGATE_MISSING}),
        (_form(MANAGER, later), {DELEGATE_BLOCK: DELEGATE_YOURSELF}),
        (_form(STRANGER, past), {UNTIL_BLOCK: DELEGATION_END_PAST}),
    ]
    for values, errors in cases:
        response = await world.submit(MANAGER, view, values)
        assert response.status == 200
        assert await response.json() == {"response_action": "errors", "errors": errors}
    await world.settle()
    assert await world.app.list_delegations(tenant_id=TEAM) == []
    assert _dms_to(world, STRANGER) == []


async def test_a_delegation_the_command_line_adds_and_ends_is_told_by_the_serving_bot(
    world: SlackWorld, tmp_path: Path
) -> None:
    """``python -m bot delegations add`` (another process, on the bot's database) is told to
    the delegate by the bot's sweep, once; so is its early end."""
    env = person_env(DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}")
    added = python_m_bot(
        "delegations", "add", MANAGER, STRANGER, "--tenant", TEAM, "--until", "2999-01-01",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert added.code == 0, added.err
    assert _dms_to(world, STRANGER) == []
    [made] = await world.app.list_delegations(tenant_id=TEAM, include_ended=True)
    # the command's clock is the system's: the bot's fake one catches up with its start
    await world.clock.advance(max(made.created_at - world.clock.now(), SWEEP_INTERVAL))
    await world.settle()
    await world.clock.advance(SWEEP_INTERVAL)  # told once
    await world.settle()
    [started] = _dms_to(world, STRANGER)
    assert started.startswith(f"<@{MANAGER}> hands you their questions for ")
    assert slack_date(made.ends_at) in started

    ended = python_m_bot(
        "delegations", "end", made.delegation_id, "--tenant", TEAM, "--by", MANAGER,
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert ended.code == 0, ended.err
    await world.clock.advance(SWEEP_INTERVAL)
    await world.settle()
    assert _dms_to(world, STRANGER) == [started, delegation_ended(mention(MANAGER))]
