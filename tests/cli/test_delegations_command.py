"""``python -m bot delegations add | list | end`` as a person runs it (a process, on the bot's
database): a delegation added from the command line is the App's, until its end."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from bot import App
from bot.testing import mock_llm
from tests.cli.processes import person_env, python_m_bot
from tests.conftest import NO_SETTINGS
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.four_eyes import WireAgent, WireApplication


async def test_a_delegation_added_listed_and_ended_from_the_command_line(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    env = person_env(COUNTERSIGN_ENCRYPTION_KEYS=TEST_ENCRYPTION_KEYS, DATABASE_URL=url)

    added = python_m_bot(
        "delegations", "add", "U0ANN", "U0BOB", "--tenant", "acme", "--until", "2999-01-01",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert added.code == 0, added.err
    assert "active  tenant acme  U0ANN → U0BOB  until 2999-01-01T00:00:00+00:00" in added.out
    delegation_id = added.out.split()[1]

    mock_llm(WireAgent)
    async with await App.create(WireApplication, database_url=url, settings=NO_SETTINGS) as app:
        [seen] = await app.list_delegations(tenant_id="acme")
        assert (seen.delegation_id, seen.delegator, seen.delegate) == (
            delegation_id, "U0ANN", "U0BOB",
        )  # fmt: skip
        assert seen.ends_at - seen.created_at > timedelta(days=300)

    past = python_m_bot(
        "delegations", "add", "U0ANN", "U0BOB", "--tenant", "acme", "--until", "2001-01-01",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert (past.code, past.err.strip()) == (2, "--until: the end is already past")

    ended = python_m_bot(
        "delegations", "end", delegation_id, "--tenant", "acme", "--by", "U0ANN",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert ended.code == 0 and ended.out.startswith(f"ended: {delegation_id}  ended")
    listed = python_m_bot("delegations", "list", "--tenant", "acme", cwd=tmp_path, env=env)
    assert listed.out == "" and listed.err.strip() == "no active delegations"
    every = python_m_bot("delegations", "list", "--all", cwd=tmp_path, env=env)
    assert every.out.startswith(delegation_id)
