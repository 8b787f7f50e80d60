"""A Slack world for the bot's tests: the Slack stub, the office App, the bot over HTTP.

Requests reach the bot exactly as Slack sends them (signed, interactive bodies as
``payload=<urlencoded json>``), over loopback; the bot's Web API calls go to the stub.
"""

from __future__ import annotations

import io
import itertools
import json
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer
from slack_sdk.signature import SignatureVerifier

from bot import App, ExecutionResult, Settings, WorkflowStartText
from bot.testing import FakeClock, ScriptedChatModel, mock_llm
from channels.slack import SlackBot, SlackSettings, SlackThread
from tests.office import Ledger
from tests.slack.office import (
    APPROVALS,
    SlackOfficeAgent,
    SlackOfficeApplication,
    SlackOfficeWorkflow,
)
from tests.slack.stub import TEAM, SlackStub

SECRET = "test-signing-secret"
OWNER_CHANNEL = "C0GENERAL"


def signed_headers(
    body: str, *, secret: str = SECRET, timestamp: int | None = None
) -> dict[str, str]:
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    assert signature is not None  # slack_sdk types it Optional: None only without a body
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}


def interactive_body(payload: Mapping[str, Any]) -> str:
    return f"payload={quote(json.dumps(payload))}"


@dataclass
class SlackWorld:
    app: App
    bot: SlackBot
    stub: SlackStub
    http: TestClient[Any, Any]
    ledger: Ledger
    clock: FakeClock
    llm: ScriptedChatModel
    tenant: str = TEAM
    workflow: type = SlackOfficeWorkflow
    _events: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # ---------------------------------------------------------------- raw requests

    async def post(
        self,
        body: str,
        *,
        content_type: str = "application/x-www-form-urlencoded",
        headers: Mapping[str, str] | None = None,
        sign: bool = True,
        secret: str = SECRET,
        timestamp: int | None = None,
    ) -> ClientResponse:
        sent = {"Content-Type": content_type}
        if sign:
            sent |= signed_headers(body, secret=secret, timestamp=timestamp)
        sent |= dict(headers or {})
        raw = body.encode()
        data = io.BytesIO(raw) if len(raw) > 64 * 1024 else raw
        return await self.http.post("/slack/events", data=data, headers=sent)

    async def settle(self) -> None:
        """Let the work started after the acks finish."""
        await self.bot.wait_idle()

    # ---------------------------------------------------------------- interactions

    async def click(
        self,
        user: str,
        action_id: str,
        value: str,
        *,
        channel: str = APPROVALS,
        message_ts: str = "1700000000.000001",
        thread_ts: str | None = None,
        ephemeral: bool = False,
        home: bool = False,
        state: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> ClientResponse:
        """``state``: the ``state.values`` of the surface's inputs (ticked checkboxes) that
        Slack sends with the click; ``headers``: e.g. Slack's retry headers."""
        container: dict[str, Any]
        if home:
            container = {"type": "view", "view_id": "V0HOME"}
        else:
            container = {
                "type": "message",
                "message_ts": message_ts,
                "channel_id": channel,
                "is_ephemeral": ephemeral,
            }
            if thread_ts:
                container["thread_ts"] = thread_ts
        payload: dict[str, Any] = {
            "type": "block_actions",
            "team": {"id": TEAM, "domain": "acme"},
            "user": {"id": user, "team_id": TEAM, "username": user.lower()},
            "api_app_id": "A0APP",
            "token": "legacy",
            "container": container,
            "trigger_id": f"trigger-{next(self._ts)}",
            "response_url": self.stub.response_url(),
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "block_id": "b1",
                    "value": value,
                    "action_ts": "1700000002.000000",
                }
            ],
        }
        if not home:
            payload["channel"] = {"id": channel, "name": "approvals"}
            payload["message"] = {"ts": message_ts, "type": "message"}
        if state is not None and home:
            payload["view"] = {"id": "V0HOME", "type": "home", "state": {"values": dict(state)}}
        elif state is not None:
            payload["state"] = {"values": dict(state)}
        return await self.post(interactive_body(payload), headers=headers)

    async def submit(
        self, user: str, view: Mapping[str, Any], values: Mapping[str, Any]
    ) -> ClientResponse:
        payload = {
            "type": "view_submission",
            "team": {"id": TEAM, "domain": "acme"},
            "user": {"id": user, "team_id": TEAM},
            "api_app_id": "A0APP",
            "token": "legacy",
            "trigger_id": "trigger-submit",
            "view": {
                "id": "V0MODAL",
                "team_id": TEAM,
                "type": "modal",
                "callback_id": view["callback_id"],
                "private_metadata": view.get("private_metadata", ""),
                "blocks": view.get("blocks", []),
                "state": {"values": dict(values)},
                "hash": "h",
            },
        }
        return await self.post(interactive_body(payload))

    async def event(
        self,
        event: Mapping[str, Any],
        *,
        event_id: str | None = None,
        retry: int | None = None,
    ) -> ClientResponse:
        envelope = {
            "token": "legacy",
            "team_id": TEAM,
            "api_app_id": "A0APP",
            "event": dict(event),
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(self._events):08d}",
            "event_time": 1700000000,
            "authorizations": [{"team_id": TEAM, "user_id": "U0BOT", "is_bot": True}],
        }
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        return await self.post(
            json.dumps(envelope),
            content_type="application/json",
            headers=headers if retry is not None else None,
        )

    async def message(
        self,
        user: str,
        text: str,
        *,
        channel: str = APPROVALS,
        thread_ts: str | None = None,
        channel_type: str = "channel",
        **extra: Any,
    ) -> ClientResponse:
        event: dict[str, Any] = {
            "type": "message",
            "user": user,
            "text": text,
            "channel": channel,
            "channel_type": channel_type,
            "ts": f"1700000100.{next(self._ts):06d}",
            **extra,
        }
        if thread_ts is not None:
            event["thread_ts"] = thread_ts
        return await self.event(event)

    async def command(self, user: str, text: str = "", command: str = "/pending") -> ClientResponse:
        form = {
            "token": "legacy",
            "team_id": TEAM,
            "team_domain": "acme",
            "channel_id": OWNER_CHANNEL,
            "channel_name": "general",
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": "A0APP",
            "response_url": self.stub.response_url(),
            "trigger_id": "trigger-command",
        }
        return await self.post(urlencode(form))

    # ---------------------------------------------------------------- the runtime

    async def execute(
        self, text: str = "go", *, owner: str = "U0OWNER", thread: SlackThread | None = None
    ) -> ExecutionResult:
        return await self.app.execute(
            self.workflow,
            WorkflowStartText(text=text),
            tenant_id=self.tenant,
            owner_id=owner,
            thread_id=None if thread is None else thread.thread_id(),
        )


@pytest.fixture
async def stub() -> AsyncIterator[SlackStub]:
    slack = SlackStub()
    await slack.start()
    yield slack
    await slack.close()


@asynccontextmanager
async def open_world(
    stub: SlackStub,
    database_url: str,
    *,
    tenant: str | None = None,
    settings: Settings | None = None,
    check_slack_when_ready: bool = False,
    api_timeout_seconds: float = 10.0,
    application: tuple[type, type, type] | None = None,
) -> AsyncIterator[SlackWorld]:
    """``application``: (application, its agent, its workflow) instead of the Slack office."""
    application_cls, agent, workflow = application or (
        SlackOfficeApplication,
        SlackOfficeAgent,
        SlackOfficeWorkflow,
    )
    llm = mock_llm(agent)
    ledger = Ledger()
    clock = FakeClock()
    stub.clock = clock  # what Slack lists "since" a time follows the App's clock
    app = await App.create(
        application_cls,
        database_url=database_url,
        clock=clock,
        settings=settings or Settings(),
        services={Ledger: ledger},
    )
    bot = SlackBot(
        app,
        SlackSettings(
            bot_token="xoxb-test",
            signing_secret=SECRET,
            api_url=stub.api_url,
            tenant=tenant,
            api_timeout_seconds=api_timeout_seconds,
        ),
        check_slack_when_ready=check_slack_when_ready,
    )
    await bot.start()
    http = TestClient(TestServer(bot.web_app(), host="127.0.0.1"))
    await http.start_server()
    try:
        yield SlackWorld(
            app=app,
            bot=bot,
            stub=stub,
            http=http,
            ledger=ledger,
            clock=clock,
            llm=llm,
            tenant=tenant or TEAM,
            workflow=workflow,
        )
    finally:
        await http.close()
        await bot.close()
        await app.close()


@pytest.fixture
async def world(stub: SlackStub, tmp_path: Path) -> AsyncIterator[SlackWorld]:
    """The office on a SQLite file (Slack state in the App's database)."""
    async with open_world(stub, f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}") as opened:
        yield opened


@pytest.fixture
async def memory_world(stub: SlackStub) -> AsyncIterator[SlackWorld]:
    """The office on in-memory SQLite (Slack state in the bot's own in-memory database)."""
    async with open_world(stub, "sqlite+aiosqlite:///:memory:") as opened:
        yield opened
