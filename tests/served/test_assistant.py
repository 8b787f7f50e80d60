"""Slack's assistant pane serving a graph: a thread started shows the suggested prompts, a
message in it runs the graph, the thread's status and agent session say what the run waits
for (paced on the App's clock), the session's Stop cancels the thread's question (its card
says who stopped it), and an approved run's answer is streamed into the thread. Signed
requests against the Web API stub; every message and view sent checked with slack_sdk.models."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool, tool

from bot import App, Settings
from bot.served.application import ServedApplication, served_application
from bot.served.channels import slack_roles
from bot.served.graphs import LoadedGraph
from bot.testing import FakeClock, ScriptedChatModel
from channels.slack import SlackBot, SlackSettings
from channels.slack.render import APPROVE_ACTION
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SECRET, interactive_body, signed_headers
from tests.slack.stub import SESSION_STATUSES, TEAM, SlackStub

APPROVALS = "C0APPROVALS"
FINANCE = "S0FINANCE"
DM = "D0ASSIST"
THREAD = "1700000500.000001"
OWNER = "U0OWNER"
PROMPTS = [("Refund an order", "Refund order A-7, it arrived broken")]


@dataclass
class Pane:
    bot: SlackBot
    app: App
    stub: SlackStub
    http: TestClient[Any, Any]
    clock: FakeClock
    runs: list[str]
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def post(self, body: str, content_type: str) -> int:
        headers = {"Content-Type": content_type, **signed_headers(body)}
        response = await self.http.post("/slack/events", data=body.encode(), headers=headers)
        return response.status

    async def event(self, event: dict[str, Any]) -> int:
        envelope = {
            "type": "event_callback",
            "team_id": TEAM,
            "api_app_id": "A0APP",
            "event_id": f"Ev0PANE{next(self._ids)}",
            "event_time": 1700000000,
            "event": event,
        }
        return await self.post(json.dumps(envelope), "application/json")

    async def said(self, method: str, count: int) -> list[Any]:
        return await self.stub.wait_for(method, count)


def refund_tool(runs: list[str]) -> BaseTool:
    @tool
    def refund(order_id: str, amount: float) -> str:
        """Refund an order's card payment."""
        runs.append(order_id)
        return f"refunded {amount:.2f} on order {order_id}"

    return refund


@pytest.fixture
async def pane(stub: SlackStub) -> AsyncIterator[Pane]:
    runs: list[str] = []
    refund = refund_tool(runs)
    model = ScriptedChatModel().then_return(
        AIMessage(
            content="It arrived broken: I will refund it.",
            tool_calls=[{"name": "refund", "args": {"order_id": "A-7", "amount": 30}, "id": "c1"}],
        ),
        "Refunded order A-7.",
    )
    graph = create_agent(
        model,
        tools=[refund],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"refund": {"allowed_decisions": ["approve", "reject"]}}
            )
        ],
    )
    loaded = LoadedGraph(name="my-agent", target="test:graph", graph=graph, asked=(refund,))
    roles = slack_roles(APPROVALS, [FINANCE])
    served: ServedApplication = served_application(
        [loaded], answered_by=roles.answered_by, implement=roles.implement
    )
    clock = FakeClock()
    app = await App.create(
        served.application,
        database_url="sqlite+aiosqlite:///:memory:",
        clock=clock,
        settings=Settings(),
    )
    agents = served.attach(app)
    bot = SlackBot(
        app,
        SlackSettings(bot_token="xoxb-test", signing_secret=SECRET, api_url=stub.api_url),
        agents=agents,
        suggested_prompts=PROMPTS,
    )
    await bot.start()
    http = TestClient(TestServer(bot.web_app(), host="127.0.0.1"))
    await http.start_server()
    try:
        yield Pane(bot=bot, app=app, stub=stub, http=http, clock=clock, runs=runs)
    finally:
        await http.close()
        await bot.close()
        await app.close()


async def idle_with_time_moving(pane: Pane) -> None:
    """Wait for the bot's work to end while the App's clock moves on (the thread's status
    calls wait their turn on it)."""
    idle = asyncio.ensure_future(pane.bot.wait_idle())
    while not idle.done():
        await pane.clock.advance(timedelta(seconds=1))
        await asyncio.wait({idle}, timeout=0.05)


async def start_and_ask(pane: Pane) -> str:
    """Open the assistant thread, ask in it; the question's pause id (its button's value)."""
    started = {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": OWNER,
            "context": {"channel_id": "C0GENERAL"},
            "channel_id": DM,
            "thread_ts": THREAD,
        },
        "event_ts": THREAD,
    }
    assert await pane.event(started) == 200
    [prompts] = await pane.said("assistant.threads.setSuggestedPrompts", 1)
    assert prompts.payload["prompts"] == [{"title": t, "message": m} for t, m in PROMPTS]
    asked = {
        "type": "message",
        "user": OWNER,
        "text": "Refund order A-7, it arrived broken",
        "channel": DM,
        "channel_type": "im",
        "ts": "1700000500.000002",
        "thread_ts": THREAD,
    }
    assert await pane.event(asked) == 200
    [question] = await pane.said("chat.postMessage", 1)
    assert question.payload["channel"] == APPROVALS
    assert "It arrived broken: I will refund it." in all_text(question.blocks())
    [working] = await pane.said("assistant.threads.setStatus", 1)
    assert (working.payload["channel_id"], working.payload["thread_ts"]) == (DM, THREAD)
    [session] = await pane.said("agents.sessions.setStatus", 1)
    assert session.payload["status"] == "processing"
    return str(buttons(question.blocks())[0]["value"])


def session_statuses(pane: Pane) -> set[str]:
    """Every agent session status the bot sent (each must be one Slack takes)."""
    return {str(c.payload["status"]) for c in pane.stub.of("agents.sessions.setStatus")}


async def test_the_thread_says_what_it_waits_for_and_stop_cancels_its_question(
    pane: Pane,
) -> None:
    pause_id = await start_and_ask(pane)
    # the run rests on its question: the next status waits its turn (every few seconds)
    assert len(pane.stub.of("assistant.threads.setStatus")) == 1
    await pane.clock.advance(timedelta(seconds=2))
    statuses = await pane.said("assistant.threads.setStatus", 2)
    assert statuses[-1].payload["status"] == f"waiting for approval from <!subteam^{FINANCE}>"
    sessions = await pane.said("agents.sessions.setStatus", 2)
    assert sessions[-1].payload["status"] == "suspended"

    stopped = {"type": "agent_session_stopped", "user": OWNER, "channel": DM, "thread_ts": THREAD}
    assert await pane.event(stopped) == 200
    [card] = await pane.said("chat.update", 1)
    await idle_with_time_moving(pane)  # the session's last status waits its turn

    assert card.payload["channel"] == APPROVALS
    assert f"Stopped* by <@{OWNER}>" in all_text(card.blocks())
    assert buttons(card.blocks()) == []
    assert await pane.app.list_pending(tenant_id=TEAM) == []
    assert pane.runs == []
    assert pane.stub.of("agents.sessions.setStatus")[-1].payload["status"] == "active"
    assert {
        c.payload["status"] for c in pane.stub.of("agents.sessions.setStatus")
    } <= SESSION_STATUSES
    assert_sent_valid(pane.stub.calls, {pause_id})


async def test_an_approved_run_streams_its_answer_into_the_thread(pane: Pane) -> None:
    pause_id = await start_and_ask(pane)
    click = interactive_body(
        {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": "U0BOSS", "team_id": TEAM},
            "container": {"type": "message", "channel_id": APPROVALS, "is_ephemeral": False},
            "channel": {"id": APPROVALS},
            "trigger_id": "t",
            "actions": [{"type": "button", "action_id": APPROVE_ACTION, "value": pause_id}],
        }
    )
    pane.stub.groups[FINANCE] = ["U0BOSS"]
    assert await pane.post(click, "application/x-www-form-urlencoded") == 200
    await idle_with_time_moving(pane)  # what waits its turn on the App's clock goes out
    [stream] = pane.stub.of("chat.startStream")

    assert stream.payload["channel"] == DM and stream.payload["thread_ts"] == THREAD
    assert stream.payload["markdown_text"] == "Refunded order A-7."
    assert stream.payload["recipient_user_id"] == OWNER
    [stop] = pane.stub.of("chat.stopStream")
    assert stop.payload["ts"] and stop.payload["channel"] == DM
    assert pane.stub.of("agents.sessions.setStatus")[-1].payload["status"] == "active"
    assert pane.runs == ["A-7"]
    methods = pane.stub.methods()
    assert methods.index("chat.startStream") < methods.index("chat.stopStream")
    assert {
        c.payload["status"] for c in pane.stub.of("agents.sessions.setStatus")
    } <= SESSION_STATUSES
    assert_sent_valid(pane.stub.calls, {pause_id})
