"""Socket Mode installed by OAuth (Bolt supports it: each envelope is authorized by the
installation store): the install's pages are served over HTTP (``SlackBot.install_app``), the
events come over the socket, and what a workspace's envelope asks is done with its own token."""

from __future__ import annotations

from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from channels.slack import SlackBot
from tests.slack.office import MANAGER
from tests.slack.stub import SlackStub, Workspace
from tests.slack.test_oauth_install import Installed, install, oauth_settings, office_app
from tests.slack.test_oauth_tenants import token_of


async def test_over_socket_mode_each_workspace_is_answered_with_its_own_token(
    stub: SlackStub, tmp_path: Path
) -> None:
    database = tmp_path / "cs.db"
    app, llm = await office_app(database)
    settings = oauth_settings(stub, app_token="xapp-test")
    bot = SlackBot(app, settings)
    http = TestClient(TestServer(bot.install_app(), host="127.0.0.1"))
    try:
        await bot.start()
        await http.start_server()
        installed = Installed(app=app, bot=bot, http=http, stub=stub, database=database, llm=llm)
        await install(installed, "code-1", Workspace(team_id="T0ONE"))
        await install(installed, "code-2", Workspace(team_id="T0TWO"))
        assert (await http.post("/slack/events")).status == 404  # events: over the socket

        for number, team in enumerate(["T0ONE", "T0TWO"]):
            await stub.socket_envelopes.put(
                {
                    "envelope_id": f"env-{team}",
                    "type": "events_api",
                    "accepts_response_payload": False,
                    "retry_attempt": 0,
                    "payload": {
                        "team_id": team,
                        "api_app_id": "A0APP",
                        "type": "event_callback",
                        "event_id": f"Ev0SOCKET{team}",
                        "event": {"type": "app_home_opened", "user": MANAGER, "tab": "home"},
                    },
                }
            )
            published = await stub.wait_for("views.publish", number + 1)
            assert published[-1].headers["Authorization"] == f"Bearer {token_of(installed, team)}"
    finally:
        await http.close()
        await bot.close()
        await app.close()
