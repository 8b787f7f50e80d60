"""Slack and the web serving one application at once: one role asked in both places (one
implementation that sends in both), the first answer wins, and both places show it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot import (
    App,
    ChannelAsk,
    ChannelOutcome,
    ChannelWithdrawal,
    DecidedBy,
    ExecutionContext,
    PauseAnswerer,
    Settings,
    WorkflowStartText,
    channel,
    channel_role,
    reply_interpreter,
    tool,
)
from bot.core.channel import AwaitReply, ChannelOf
from bot.testing import FakeClock, call_tool, mock_llm
from channels.slack import SlackBot, SlackGateway, SlackSettings, slack_channel
from channels.slack.catalog import CONFIG_ATTRIBUTE as SLACK_CONFIG
from channels.slack.render import APPROVE_ACTION
from channels.web import WebNotice, WebOutbox, WebServer, web_channel
from channels.web.catalog import CONFIG_ATTRIBUTE as WEB_CONFIG
from interpreters import KeywordReplyInterpreter
from tests.apps import sample_agent, sample_application
from tests.office import Done, Ledger
from tests.ports import free_port
from tests.slack.checks import all_text, buttons
from tests.slack.conftest import SECRET, SlackWorld
from tests.slack.office import APPROVALS, MANAGER, RefundCardInput
from tests.slack.stub import SlackStub
from tests.web.conftest import browser
from tests.web.pages import answer, has_forms, open_page

ALICE = "alice@example.com"


@reply_interpreter(
    name="both-refund-reply-interpreter",
    description="Reads approve / reject",
    decided_by=DecidedBy.CODE,
)
class BothReplyInterpreter(KeywordReplyInterpreter): ...


@channel_role(
    name="both-refund-approval-channel",
    description="A manager approves card refunds, in Slack or on the web",
    approves=RefundCardInput,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=BothReplyInterpreter,
)
class BothRefundApproval(ChannelOf): ...


SlackRefunds = slack_channel(
    BothRefundApproval,
    name="slack-both-refund-approval-channel",
    conversation=APPROVALS,
    approvers=[MANAGER],
)
WebRefunds = web_channel(
    BothRefundApproval, name="web-both-refund-approval-channel", approvers=[ALICE]
)


@channel(
    name="slack-and-web-refund-approval-channel",
    description="Asks in Slack and on the web; the first answer wins",
    deps=[SlackGateway, WebOutbox, ExecutionContext],
)
class SlackAndWebRefunds(BothRefundApproval):
    """One implementation of the role that sends in both places. It names both channels'
    configurations, so each side knows who may answer there."""

    def __init__(self, gateway: SlackGateway, outbox: WebOutbox, context: ExecutionContext):
        self._both = (SlackRefunds(gateway, context), WebRefunds(outbox, context))

    async def send(self, ask: ChannelAsk) -> AwaitReply:
        for each in self._both:
            await each.send(ask)
        return ChannelOutcome.await_reply()

    async def withdraw(self, withdrawal: ChannelWithdrawal) -> None:
        for each in self._both:
            await each.withdraw(withdrawal)


# each side finds its configuration in the class's own namespace
setattr(SlackAndWebRefunds, SLACK_CONFIG, SlackRefunds.slack)
setattr(SlackAndWebRefunds, WEB_CONFIG, WebRefunds.web)


@tool(
    name="refund-card-tool",
    description="Refunds a card",
    input=RefundCardInput,
    output=Done,
    channel=BothRefundApproval,
    deps=[Ledger],
)
class RefundCardTool:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def run(self, input: RefundCardInput) -> Done:
        self.ledger.runs.append(("refund", input.model_dump()))
        return Done(status="refunded")


BothAgent = sample_agent("both-office", tools=[RefundCardTool], description="Refunds")
BOTH = sample_application("both-office", agent=BothAgent, channels=[SlackAndWebRefunds])


class Both:
    def __init__(self, slack: SlackWorld, web: WebServer, base_url: str) -> None:
        self.slack = slack
        self.web = web
        self.base_url = base_url
        self.links: list[str] = []

    async def ask_refund(self) -> str:
        self.slack.llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 40}), "ok")
        await self.slack.app.execute(
            BOTH.workflow, WorkflowStartText(text="refund"), tenant_id="T0TEAM", owner_id="U0OWNER"
        )
        [pending] = await self.slack.app.list_pending(
            tenant_id="T0TEAM", include_channel_pause_ids=True
        )
        assert pending.pause_id is not None
        return pending.pause_id


@pytest.fixture
async def both(tmp_path: Path) -> AsyncIterator[Both]:
    stub = SlackStub()
    await stub.start()
    llm = mock_llm(BothAgent)
    ledger = Ledger()
    app = await App.create(
        BOTH.application,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        clock=FakeClock(),
        settings=Settings(),
        services={Ledger: ledger},
    )
    links: list[str] = []
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"

    async def notify(notice: WebNotice) -> None:
        links.append(notice.url.removeprefix(base_url))

    web = WebServer(app, base_url=base_url, notifier=notify)
    bot = SlackBot(
        app, SlackSettings(bot_token="xoxb-test", signing_secret=SECRET, api_url=stub.api_url)
    )
    await bot.start()
    application = bot.web_app()
    web.add_routes(application)  # one server: /slack/events and the web pages
    http = TestClient(TestServer(application, host="127.0.0.1", port=port))
    await http.start_server()
    world = SlackWorld(
        app=app, bot=bot, stub=stub, http=http, ledger=ledger, clock=FakeClock(), llm=llm
    )
    opened = Both(world, web, base_url)
    opened.links = links
    try:
        yield opened
    finally:
        await http.close()
        await bot.close()
        await app.close()
        await stub.close()


async def test_answered_on_the_web_first_slack_shows_it_and_refuses_a_late_click(
    both: Both,
) -> None:
    pause_id = await both.ask_refund()
    assert len(both.slack.stub.of("chat.postMessage")) == 1
    [link] = both.links

    async with browser(both.base_url) as alice:
        status, page = await answer(alice, link, "approve")
    assert status == 303 and "Approved by you." in page

    [updated] = await both.slack.stub.wait_for("chat.update")
    assert buttons(updated.blocks()) == []
    assert f"*Approved* by {ALICE}" in all_text(updated.blocks())
    await both.slack.click(MANAGER, APPROVE_ACTION, pause_id)
    await both.slack.settle()
    [told] = both.slack.stub.of("chat.postEphemeral")
    assert "already answered" in told.payload["text"]
    assert len(both.slack.ledger.runs) == 1


async def test_answered_in_slack_first_the_page_shows_it_without_forms(both: Both) -> None:
    pause_id = await both.ask_refund()

    await both.slack.click(MANAGER, APPROVE_ACTION, pause_id)
    await both.slack.settle()

    async with browser(both.base_url) as alice:
        status, page = await open_page(alice, both.links[0])
    assert status == 200
    assert f"Approved by {MANAGER}." in page
    assert not has_forms(page)
    assert len(both.slack.ledger.runs) == 1
