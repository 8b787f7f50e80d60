"""``python -m bot serve`` answers signed Slack requests whose fields have the wrong types with
400 and goes on serving, a warning at most in its log (issue 25, item 3: each was a 500 with
a traceback). The same requests in process, with the waiting pause checked: ``test_edge.py``.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any, Final

import aiohttp

from tests.ports import free_port
from tests.slack.conftest import interactive_body
from tests.slack.stub import TEAM, SlackStub
from tests.slack.test_serve import (
    ROOT,
    clean_environ,
    signed_post,
    start_serve,
    wait_healthy,
)

JSON: Final = "application/json"
FORM: Final = "application/x-www-form-urlencoded"
WRONG_TYPES: Final[list[tuple[dict[str, Any], str]]] = [
    # first: Bolt checks its token (auth.test, with the payload's team id) on the first request
    ({"command": "/pending", "user_id": "U0OWNER", "team_id": {"id": TEAM}}, JSON),
    (
        {
            "type": "event_callback",
            "team_id": TEAM,
            "event_id": "Ev0A",
            "event": {"type": ["message"]},
        },
        JSON,
    ),
    ({"type": "app_rate_limited", "event": 7}, JSON),
    ({"type": "view_submission", "user": {"id": "U0OWNER"}, "view": {"callback_id": "x"}}, FORM),
]


async def test_serve_answers_wrong_types_400_and_serves_on(stub: SlackStub, tmp_path: Path) -> None:
    port = free_port()
    env = clean_environ(
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
            statuses = []
            for payload, content_type in WRONG_TYPES:
                body = json.dumps(payload) if content_type == JSON else interactive_body(payload)
                statuses.append(
                    await signed_post(session, f"{base}/slack/events", body, content_type)
                )
            assert statuses == [400] * len(WRONG_TYPES)
            async with session.get(f"{base}/healthz") as health:
                assert health.status == 200
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, err.decode()
        assert "Traceback" not in err.decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
