"""``python -m bot serve`` installed by OAuth, as a person runs it: a process with the three
OAuth settings (no bot token), "Add to Slack" at /slack/install, Slack's redirect back, then a
mention from the installed workspace whose questions are asked with that workspace's token."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import aiohttp

from tests.ports import free_port
from tests.slack.conftest import SECRET
from tests.slack.stub import BOT_USER, SlackStub, Workspace
from tests.slack.test_serve import ROOT, signed_post, start_serve, wait_healthy


def oauth_environ(**extra: str) -> dict[str, str]:
    kept = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "COUNTERSIGN_", "PORT"))
    }
    return {
        **kept,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_CLIENT_ID": "111.222",
        "SLACK_CLIENT_SECRET": "client-secret",
        "SLACK_STATE_SECRET": "state-secret",
        **extra,
    }


async def test_serve_installs_by_oauth_and_asks_with_the_workspaces_token(
    stub: SlackStub, tmp_path: Path
) -> None:
    stub.workspaces["code-1"] = Workspace(team_id="T0SERVED")
    port = free_port()
    env = oauth_environ(
        SLACK_API_URL=stub.api_url,
        PORT=str(port),
        COUNTERSIGN_APP="tests.slack.served:ServedApplication",
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'served.db'}",
        PYTHONPATH=str(ROOT),
    )
    process = await start_serve(env, tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"{base}/healthz", process)
            async with session.get(f"{base}/slack/install") as page:
                assert page.status == 200
                html = await page.text()
                cookie = page.headers["Set-Cookie"].split(";")[0]
            link = html.split('href="https://slack.com/oauth/v2/authorize')[1].split('"')[0]
            state = parse_qs(urlparse(link.replace("&amp;", "&")).query)["state"][0]
            async with session.get(
                f"{base}/slack/oauth_redirect",
                params={"code": "code-1", "state": state},
                headers={"Cookie": cookie},
            ) as back:
                assert back.status == 200
            token = next(iter(stub.tokens))
            mention = {
                "type": "event_callback",
                "team_id": "T0SERVED",
                "event_id": "Ev0OAUTH",
                "event": {
                    "type": "app_mention",
                    "user": "U0OWNER",
                    "text": f"<@{BOT_USER}> do the office things",
                    "channel": "C0GENERAL",
                    "ts": "1700000900.000001",
                },
            }
            events = f"{base}/slack/events"
            assert (
                await signed_post(session, events, json.dumps(mention), "application/json") == 200
            )
            questions = await stub.wait_for("chat.postMessage", 2)
            assert {q.headers["Authorization"] for q in questions} == {f"Bearer {token}"}
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, err.decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
