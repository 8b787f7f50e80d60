"""Socket Mode: with an app token the bot connects to Slack's WebSocket and acks envelopes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_bolt.async_app import AsyncApp

from bot import App, Settings
from bot.testing import FakeClock, mock_llm
from channels.slack import SlackBot, SlackSettings
from channels.slack.store import SeenEvents
from tests.office import Ledger
from tests.slack.conftest import OWNER_CHANNEL, SECRET
from tests.slack.office import OWNER, SlackOfficeAgent, SlackOfficeApplication
from tests.slack.stub import BOT_USER, TEAM, SlackStub


async def test_an_envelope_is_acked_and_its_mention_answered(
    stub: SlackStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    dispatch, handled = AsyncApp.async_dispatch, SeenEvents.handled

    async def dispatched(self: AsyncApp, req: Any) -> Any:
        response = await dispatch(self, req)
        order.append("dispatched")
        return response

    async def marked(self: SeenEvents, event_id: str, at: Any) -> None:
        order.append("handled")
        await handled(self, event_id, at)

    monkeypatch.setattr(AsyncApp, "async_dispatch", dispatched)
    monkeypatch.setattr(SeenEvents, "handled", marked)
    mock_llm(SlackOfficeAgent).then_return("Hi from Socket Mode.")
    app = await App.create(
        SlackOfficeApplication,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'cs.db'}",
        clock=FakeClock(),
        settings=Settings(),
        services={Ledger: Ledger()},
    )
    settings = SlackSettings(
        bot_token="xoxb-test",
        signing_secret=SECRET,
        app_token="xapp-test",
        api_url=stub.api_url,
    )
    bot = SlackBot(app, settings)
    try:
        await bot.start()
        [opened] = stub.of("apps.connections.open")
        assert opened.headers["Authorization"] == "Bearer xapp-test"

        await stub.socket_envelopes.put(
            {
                "envelope_id": "env-1",
                "type": "events_api",
                "accepts_response_payload": False,
                "retry_attempt": 0,
                "payload": {
                    "team_id": TEAM,
                    "api_app_id": "A0APP",
                    "type": "event_callback",
                    "event_id": "Ev0SOCKET",
                    "event": {
                        "type": "app_mention",
                        "user": OWNER,
                        "text": f"<@{BOT_USER}> hello",
                        "channel": OWNER_CHANNEL,
                        "ts": "1700000500.000001",
                    },
                },
            }
        )
        ack = await stub.wait_for_socket_ack()
        assert ack["envelope_id"] == "env-1"
        [posted] = await stub.wait_for("chat.postMessage")
        await bot.wait_idle()
        assert posted.payload["text"] == "Hi from Socket Mode."
        assert posted.payload["thread_ts"] == "1700000500.000001"
        # marked handled once its dispatch (listener middleware, ack) was over, not before:
        # a process that dies while a reply is being recorded leaves the event to a retry
        assert order == ["dispatched", "handled"]
        later = app.clock.now() + timedelta(minutes=5)
        assert not await bot.seen_events.take_over("Ev0SOCKET", later, later)
    finally:
        await bot.close()
        await app.close()
