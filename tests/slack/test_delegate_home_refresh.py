"""A delegate's App Home follows the delegations to them: republished when one starts and when
its delegator ends it early ("End now", a signed click against the stub), and when the command
line's add or end is told by the serving bot's sweep — for people who opened their Home."""

from __future__ import annotations

from pathlib import Path

from bot.runtime.sweeps import SWEEP_INTERVAL
from channels.slack.render_delegations import END_DELEGATION_ACTION
from tests.cli.processes import person_env, python_m_bot
from tests.slack.checks import all_text, assert_sent_valid
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER, STRANGER
from tests.slack.stub import TEAM
from tests.slack.test_home_delegations import WEEK, _home_of
from tests.slack.test_lists import home_opened

HANDED_TO_THEM = f"<@{MANAGER}> hands their questions to you until"
HANDING = f"You hand your questions to <@{STRANGER}> until"


async def test_end_now_republishes_the_delegates_home_too(world: SlackWorld) -> None:
    await home_opened(world, MANAGER)
    await home_opened(world, STRANGER)
    made = await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=WEEK
    )
    await world.settle()
    assert HANDED_TO_THEM in all_text(_home_of(world, STRANGER))  # its start refreshed it

    await world.click(MANAGER, END_DELEGATION_ACTION, made.delegation_id, home=True)
    await world.settle()

    assert HANDED_TO_THEM not in all_text(_home_of(world, STRANGER))
    assert HANDING not in all_text(_home_of(world, MANAGER))
    assert_sent_valid(world.stub.calls, set())


async def test_a_home_never_opened_is_not_published(world: SlackWorld) -> None:
    await home_opened(world, MANAGER)
    made = await world.app.delegate(
        tenant_id=TEAM, delegator=MANAGER, delegate=STRANGER, ends_in=WEEK
    )
    await world.click(MANAGER, END_DELEGATION_ACTION, made.delegation_id, home=True)
    await world.settle()
    assert [c for c in world.stub.of("views.publish") if c.payload["user_id"] == STRANGER] == []


async def test_the_command_lines_delegation_told_by_the_sweep_refreshes_both_homes(
    world: SlackWorld, tmp_path: Path
) -> None:
    await home_opened(world, MANAGER)
    await home_opened(world, STRANGER)
    env = person_env(DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}")
    added = python_m_bot(
        "delegations", "add", MANAGER, STRANGER, "--tenant", TEAM, "--until", "2999-01-01",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert added.code == 0, added.err
    [made] = await world.app.list_delegations(tenant_id=TEAM, include_ended=True)
    # the command's clock is the system's: the bot's fake one catches up with its start
    await world.clock.advance(max(made.created_at - world.clock.now(), SWEEP_INTERVAL))
    await world.settle()
    await world.clock.advance(SWEEP_INTERVAL)
    await world.settle()
    assert HANDED_TO_THEM in all_text(_home_of(world, STRANGER))
    assert HANDING in all_text(_home_of(world, MANAGER))

    ended = python_m_bot(
        "delegations", "end", made.delegation_id, "--tenant", TEAM, "--by", MANAGER,
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert ended.code == 0, ended.err
    await world.clock.advance(SWEEP_INTERVAL)
    await world.settle()

    assert HANDED_TO_THEM not in all_text(_home_of(world, STRANGER))
    assert HANDING not in all_text(_home_of(world, MANAGER))
