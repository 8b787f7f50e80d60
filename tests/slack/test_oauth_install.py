"""Installed by OAuth: "Add to Slack" at /slack/install, Slack's redirect back with a code
(``oauth.v2.access`` on the Web API stub), the installation kept in the App's database with its
tokens sealed, a signed request from the workspace authorized with that workspace's token, and a
rotating token refreshed by Bolt (``grant_type=refresh_token``) and saved."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer

from bot import App, Settings
from bot.testing import FakeClock, ScriptedChatModel, mock_llm
from channels.slack import SlackBot, SlackSettings
from channels.slack.oauth import BOT_SCOPES
from tests.office import Ledger
from tests.slack.conftest import SECRET, signed_headers
from tests.slack.office import SlackOfficeAgent, SlackOfficeApplication
from tests.slack.stub import SlackStub, Workspace

CLIENT_ID = "111.222"
KEY = "countersign-test-key"


@dataclass
class Installed:
    app: App
    bot: SlackBot
    http: TestClient[Any, Any]
    stub: SlackStub
    database: Path
    llm: ScriptedChatModel


async def office_app(database: Path) -> tuple[App, ScriptedChatModel]:
    """The Slack office on a SQLite file, its model scripted."""
    llm = mock_llm(SlackOfficeAgent)
    app = await App.create(
        SlackOfficeApplication,
        database_url=f"sqlite+aiosqlite:///{database}",
        clock=FakeClock(),
        settings=Settings(),
        services={Ledger: Ledger()},
    )
    return app, llm


def oauth_settings(stub: SlackStub, **extra: str) -> SlackSettings:
    """Installed by OAuth (no bot token), against the stub."""
    return SlackSettings(
        signing_secret=SECRET,
        api_url=stub.api_url,
        client_id=CLIENT_ID,
        client_secret="client-secret",
        state_secret="state-secret",
        **extra,
    )


@pytest.fixture
async def installed(stub: SlackStub, tmp_path: Path) -> AsyncIterator[Installed]:
    database = tmp_path / "countersign.db"
    app, llm = await office_app(database)
    bot = SlackBot(
        app,
        oauth_settings(stub),
        check_slack_when_ready=True,  # COUNTERSIGN_READYZ_SLACK: no one token to test
    )
    await bot.start()
    http = TestClient(TestServer(bot.web_app(), host="127.0.0.1"))
    await http.start_server()
    try:
        yield Installed(app=app, bot=bot, http=http, stub=stub, database=database, llm=llm)
    finally:
        await http.close()
        await bot.close()
        await app.close()


async def install(installed: Installed, code: str, workspace: Workspace) -> int:
    """What a person's browser does: /slack/install, Slack's page, the redirect back."""
    installed.stub.workspaces[code] = workspace
    page = await installed.http.get("/slack/install")
    assert page.status == 200
    link = next(
        part.split('"')[0]
        for part in (await page.text()).split('href="')[1:]
        if part.startswith("https://slack.com/oauth/v2/authorize")
    )
    query = parse_qs(urlparse(link.replace("&amp;", "&")).query)
    assert query["client_id"] == [CLIENT_ID]
    assert set(query["scope"][0].split(",")) == set(BOT_SCOPES)
    back = await installed.http.get(
        "/slack/oauth_redirect",
        params={"code": code, "state": query["state"][0]},
        headers=state_cookie(page),
    )
    return back.status


def state_cookie(page: ClientResponse) -> dict[str, str]:
    """The browser's cookie of the install (``Secure``: the test client would not send it over
    plain HTTP by itself)."""
    return {"Cookie": page.headers["Set-Cookie"].split(";")[0]}


def stored_text(database: Path) -> str:
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT * FROM cs_installations").fetchall()
    return json.dumps(rows)


async def test_an_install_keeps_the_workspace_and_its_sealed_tokens(installed: Installed) -> None:
    status = await install(installed, "code-1", Workspace(team_id="T0ONE"))

    assert status == 200
    assert [c.payload["code"] for c in installed.stub.of("oauth.v2.access")] == ["code-1"]
    text = stored_text(installed.database)
    assert "T0ONE" in text  # the ids it is found by are in clear
    assert "xoxe.xoxb-" not in text and "xoxe-1-refresh-" not in text  # the tokens are not


async def test_a_state_is_used_once(installed: Installed) -> None:
    installed.stub.workspaces["code-1"] = Workspace(team_id="T0ONE")
    page = await installed.http.get("/slack/install")
    state = (await page.text()).split("state=")[1].split('"')[0].split("&")[0]
    cookie = state_cookie(page)
    first = await installed.http.get(
        "/slack/oauth_redirect", params={"code": "code-1", "state": state}, headers=cookie
    )
    again = await installed.http.get(
        "/slack/oauth_redirect", params={"code": "code-1", "state": state}, headers=cookie
    )

    assert first.status == 200
    assert 400 <= again.status < 500  # refused: the state was consumed
    assert len(installed.stub.of("oauth.v2.access")) == 1


async def test_a_forged_state_installs_nothing(installed: Installed) -> None:
    installed.stub.workspaces["code-1"] = Workspace(team_id="T0ONE")
    page = await installed.http.get("/slack/install")  # a state of the database's
    back = await installed.http.get(
        "/slack/oauth_redirect",
        params={"code": "code-1", "state": "made-up"},
        headers={"Cookie": "slack-app-oauth-state=made-up"},
    )
    assert page.status == 200

    assert 400 <= back.status < 500
    assert installed.stub.of("oauth.v2.access") == []


async def test_a_request_is_authorized_with_its_workspaces_refreshed_token(
    installed: Installed,
) -> None:
    await install(installed, "code-1", Workspace(team_id="T0ONE", expires_in=60))
    await install(installed, "code-2", Workspace(team_id="T0TWO"))
    installed_tokens = dict(installed.stub.tokens)
    at_install = len(installed.stub.of("auth.test"))  # Bolt learns each bot's id then

    body = "&".join(
        f"{k}={v}"
        for k, v in {
            "command": "/pending",
            "text": "",
            "user_id": "U0ANN",
            "team_id": "T0ONE",
            "channel_id": "C0GENERAL",
            "response_url": installed.stub.response_url(),
            "trigger_id": "1.2.3",
        }.items()
    )
    headers = signed_headers(body) | {"Content-Type": "application/x-www-form-urlencoded"}
    answer = await installed.http.post("/slack/events", data=body, headers=headers)
    await installed.bot.wait_idle()

    assert answer.status == 200
    refreshes = [c for c in installed.stub.of("oauth.v2.access") if c.payload.get("grant_type")]
    # Bolt's authorize refreshes it; a token issued for 60 s is due again at once, so the
    # listener's own call (with the workspace's token) refreshes it again
    assert refreshes and {c.payload["grant_type"] for c in refreshes} == {"refresh_token"}
    issued = [t for t in installed.stub.tokens if t not in installed_tokens]
    assert {installed.stub.tokens[t].team_id for t in issued} == {"T0ONE"}  # T0TWO's not due
    refreshed = issued[0]
    checked = [c.headers["Authorization"] for c in installed.stub.of("auth.test")[at_install:]]
    assert checked == [f"Bearer {refreshed}"]
    assert refreshed not in stored_text(installed.database)  # saved, sealed


async def test_readyz_installed_by_oauth_asks_whether_slack_answers_with_no_token(
    installed: Installed,
) -> None:
    """``COUNTERSIGN_READYZ_SLACK`` installed by OAuth: there is no one bot token to test (and
    one workspace removing the app must not take the bot out for the others): ``api.test``."""
    await install(installed, "code-1", Workspace(team_id="T0ONE"))
    tested = len(installed.stub.of("auth.test"))

    ready = await installed.http.get("/readyz")

    assert ready.status == 200
    asked = installed.stub.of("api.test")
    assert len(asked) == 1 and "Authorization" not in asked[0].headers
    assert len(installed.stub.of("auth.test")) == tested  # no token's auth.test
    installed.stub.errors["api.test"] = "fatal_error"
    clock = installed.app.clock
    assert isinstance(clock, FakeClock)
    await clock.advance(timedelta(seconds=30))
    unready = await installed.http.get("/readyz")
    assert unready.status == 503
    assert await unready.json() == {"status": "unready", "problems": {"slack": "fatal_error"}}
