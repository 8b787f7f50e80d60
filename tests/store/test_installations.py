"""The installation store's contract (slack_sdk's ``AsyncInstallationStore``, as Bolt uses it)
on SQLite and PostgreSQL: saved and found by workspace, installer and org; the latest wins; a
refreshed bot token is what is found; deleted; the tokens sealed at rest; and OAuth states used
once within their lifetime."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from slack_sdk.oauth.installation_store.models.installation import Installation
from sqlalchemy import text

from bot.security.codec import EncryptingCodec, payload_key_id
from bot.security.keys import generate_key, parse_key_ring
from bot.security.reencrypt import reencrypt
from bot.store.database import Database
from bot.store.installations import SqlInstallations, SqlOAuthStates
from bot.testing import FakeClock
from channels.slack.installations import DatabaseInstallationStore, DatabaseStateStore
from tests.databases import BACKENDS, database

KEY = generate_key("key-a").entry()


@dataclass
class Stores:
    installations: DatabaseInstallationStore
    states: DatabaseStateStore
    database: Database
    clock: FakeClock


@pytest.fixture(params=BACKENDS)
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    clock = FakeClock()
    async with database(request.param, tmp_path) as url, Database.open(url) as opened:
        await opened.migrate(clock.now())
        codec = EncryptingCodec(parse_key_ring(KEY))
        yield Stores(
            installations=DatabaseInstallationStore("cid", SqlInstallations(opened, codec)),
            states=DatabaseStateStore(
                SqlOAuthStates(opened), secret="s", clock=clock, lifetime=timedelta(minutes=10)
            ),
            database=opened,
            clock=clock,
        )


def installation(
    clock: FakeClock,
    *,
    team: str | None = "T1",
    user: str = "U1",
    token: str = "xoxb-one",
    enterprise: str | None = None,
    org_wide: bool = False,
    later: timedelta = timedelta(0),
) -> Installation:
    return Installation(
        app_id="A1",
        enterprise_id=enterprise,
        team_id=team,
        user_id=user,
        bot_token=token,
        bot_id="B1",
        bot_user_id="UB1",
        bot_scopes=["chat:write", "commands"],
        bot_refresh_token=f"refresh-{token}",
        bot_token_expires_at=int((clock.now() + timedelta(hours=12)).timestamp()),
        is_enterprise_install=org_wide,
        installed_at=(clock.now() + later).timestamp(),
    )


async def test_an_installation_is_found_as_saved(stores: Stores) -> None:
    saved = installation(stores.clock)
    await stores.installations.async_save(saved)

    found = await stores.installations.async_find_installation(enterprise_id=None, team_id="T1")
    bot = await stores.installations.async_find_bot(enterprise_id=None, team_id="T1")

    assert found is not None and bot is not None
    assert found.to_dict() == saved.to_dict()
    assert (bot.bot_token, bot.bot_refresh_token, bot.bot_scopes) == (
        "xoxb-one",
        "refresh-xoxb-one",
        ["chat:write", "commands"],
    )
    assert await stores.installations.async_find_bot(enterprise_id=None, team_id="T2") is None


async def test_the_latest_installer_and_the_refreshed_bot_win(stores: Stores) -> None:
    store = stores.installations
    await store.async_save(installation(stores.clock, user="U1", token="xoxb-one"))
    await store.async_save(
        installation(stores.clock, user="U2", token="xoxb-two", later=timedelta(minutes=1))
    )
    first = await store.async_find_installation(enterprise_id=None, team_id="T1", user_id="U1")
    latest = await store.async_find_installation(enterprise_id=None, team_id="T1")

    assert latest is not None and latest.user_id == "U2"
    assert first is not None and first.bot_token == "xoxb-two"  # the workspace's latest bot

    bot = await store.async_find_bot(enterprise_id=None, team_id="T1")
    assert bot is not None
    bot.bot_token = "xoxb-refreshed"
    await store.async_save_bot(bot)
    again = await store.async_find_installation(enterprise_id=None, team_id="T1")
    assert again is not None and again.bot_token == "xoxb-refreshed"


async def test_an_org_wide_install_is_found_for_its_enterprise(stores: Stores) -> None:
    org = installation(stores.clock, team=None, enterprise="E1", org_wide=True)
    await stores.installations.async_save(org)

    found = await stores.installations.async_find_installation(
        enterprise_id="E1", team_id="T9", is_enterprise_install=True
    )
    assert found is not None and found.enterprise_id == "E1" and found.is_enterprise_install
    assert await stores.installations.async_find_bot(enterprise_id=None, team_id="T9") is None


async def test_a_deleted_installation_is_gone(stores: Stores) -> None:
    store = stores.installations
    await store.async_save(installation(stores.clock))
    await store.async_save(installation(stores.clock, team="T2", token="xoxb-t2"))
    await store.async_delete_installation(enterprise_id=None, team_id="T1")

    assert await store.async_find_installation(enterprise_id=None, team_id="T1") is None
    assert await store.async_find_bot(enterprise_id=None, team_id="T1") is None
    assert await store.async_find_bot(enterprise_id=None, team_id="T2") is not None


async def test_tokens_are_not_in_plaintext(stores: Stores) -> None:
    await stores.installations.async_save(installation(stores.clock, token="xoxb-secret-1"))
    async with stores.database.engine.connect() as connection:
        rows = (await connection.execute(text("SELECT * FROM cs_installations"))).all()

    stored = repr(rows)
    assert len(rows) == 2  # the installer's and the bot's
    assert "T1" in stored
    assert "xoxb-secret-1" not in stored and "refresh-xoxb" not in stored


async def test_a_state_is_consumed_once_within_its_lifetime(stores: Stores) -> None:
    states = stores.states
    once, late = await states.async_issue(), await states.async_issue()

    assert await states.async_consume(once)
    assert not await states.async_consume(once)
    assert not await states.async_consume("made-up")
    await stores.clock.advance(timedelta(minutes=11))
    assert not await states.async_consume(late)
    async with stores.database.engine.connect() as connection:
        kept = (await connection.execute(text("SELECT state_key FROM cs_oauth_states"))).all()
    assert once not in repr(kept)


async def test_reencrypt_moves_the_tokens_to_the_current_key(stores: Stores) -> None:
    await stores.installations.async_save(installation(stores.clock, token="xoxb-moved"))
    newer = generate_key("key-b").entry()

    report = await reencrypt(stores.database, parse_key_ring(f"{newer},{KEY}"))

    assert report.moved["cs_installations"] == 2
    async with stores.database.engine.connect() as connection:
        stored = (await connection.execute(text("SELECT document FROM cs_installations"))).all()
    assert {payload_key_id(row[0]) for row in stored} == {"key-b"}
    moved = DatabaseInstallationStore(
        "cid", SqlInstallations(stores.database, EncryptingCodec(parse_key_ring(newer)))
    )
    found = await moved.async_find_bot(enterprise_id=None, team_id="T1")
    assert found is not None and found.bot_token == "xoxb-moved"
