"""The bot's Slack calls are bounded (``SLACK_API_TIMEOUT_SECONDS``): a Slack that hangs makes
a call fail after the timeout, not after aiohttp's 300 s (issue 24, finding 4)."""

from __future__ import annotations

import asyncio

import pytest
from slack_sdk.errors import SlackApiError

from bot.core.errors import SettingsError
from bot.core.metrics import Metrics
from bot.testing import FakeClock
from channels.slack.call_pools import (
    CONNECTIONS,
    OTHER,
    POOL_SIZE,
    POSTING,
    UPDATING,
    VIEWS,
    family_of,
)
from channels.slack.settings import SlackSettings, load_slack_settings
from channels.slack.webapi import slack_session, web_client
from tests.slack.stub import SlackStub

SECRETS = {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "s3cret"}


async def test_a_call_slack_never_answers_fails_after_the_timeout(stub: SlackStub) -> None:
    settings = SlackSettings(
        bot_token="xoxb-test",
        signing_secret="s3cret",
        api_url=stub.api_url,
        api_timeout_seconds=0.5,
    )
    session = slack_session(settings)
    try:
        client = web_client(settings, session)
        await stub.fail_all("hang", "chat.postMessage")
        with pytest.raises(TimeoutError):
            await client.chat_postMessage(channel="C0DESK", text="hello")
        assert stub.failed == ["chat.postMessage"]  # once: a timeout is not retried at once
        await stub.restore()
        response = await client.chat_postMessage(channel="C0DESK", text="hello again")
        assert response["ok"]
    finally:
        await session.close()


async def test_every_kind_of_outage_fails_a_call_and_ends(stub: SlackStub) -> None:
    settings = SlackSettings(
        bot_token="xoxb-test", signing_secret="s3cret", api_url=stub.api_url, api_timeout_seconds=1
    )
    session = slack_session(settings)
    try:
        client = web_client(settings, session)
        await stub.fail_all("500")
        with pytest.raises(SlackApiError):
            await client.chat_postMessage(channel="C0DESK", text="a")
        await stub.fail_all("refused")
        with pytest.raises(OSError):  # aiohttp's ClientConnectorError
            await client.chat_postMessage(channel="C0DESK", text="b")
        await stub.restore()
        assert (await client.chat_postMessage(channel="C0DESK", text="c"))["ok"]
    finally:
        await session.close()


async def test_a_family_slack_hangs_holds_only_its_own_pool(stub: SlackStub) -> None:
    """Updates hang: at most a pool of them is in flight, and posts, views and lookups go on
    meanwhile (without pools, the hung updates would take every connection of the session)."""
    settings = SlackSettings(
        bot_token="xoxb-test", signing_secret="s3cret", api_url=stub.api_url, api_timeout_seconds=30
    )
    session = slack_session(settings)
    try:
        client = web_client(settings, session, metrics=Metrics(FakeClock()))
        await stub.fail_all("hang", "chat.update")
        hung = [
            asyncio.create_task(client.chat_update(channel="C0DESK", ts=f"1.{n}", text="x"))
            for n in range(CONNECTIONS + 10)
        ]
        await stub.wait_for("chat.update", POOL_SIZE)
        posted = await client.chat_postMessage(channel="C0DESK", text="still posting")
        opened = await client.views_open(trigger_id="t", view={"type": "modal"})
        found = await client.conversations_history(channel="C0DESK")
        assert posted["ok"] and opened["ok"] and found["ok"]
        assert len(stub.of("chat.update")) == POOL_SIZE  # the rest wait in their pool
        assert not any(task.done() for task in hung)

        await stub.restore()
        assert all(r["ok"] for r in await asyncio.gather(*hung))
        assert len(stub.of("chat.update")) == CONNECTIONS + 10
    finally:
        await session.close()


def test_the_methods_families() -> None:
    assert [
        family_of(m) for m in ("chat.postMessage", "chat.update", "views.open", "auth.test")
    ] == [
        POSTING,
        UPDATING,
        VIEWS,
        OTHER,
    ]


def test_the_timeout_is_a_setting_with_a_sane_default() -> None:
    assert load_slack_settings(SECRETS, env_file=None).api_timeout_seconds == 10
    settings = load_slack_settings({**SECRETS, "SLACK_API_TIMEOUT_SECONDS": "2.5"}, env_file=None)
    assert settings.api_timeout_seconds == 2.5


@pytest.mark.parametrize("value", ["0", "-1", "abc", "600"])
def test_a_bad_timeout_is_one_line_naming_it(value: str) -> None:
    with pytest.raises(SettingsError, match="SLACK_API_TIMEOUT_SECONDS is malformed"):
        load_slack_settings({**SECRETS, "SLACK_API_TIMEOUT_SECONDS": value}, env_file=None)


def test_the_sweep_interval_is_a_setting() -> None:
    from bot.settings import load_settings

    assert load_settings({}, env_file=None).sweep_interval.total_seconds() == 3
    fast = load_settings({"COUNTERSIGN_SWEEP_INTERVAL_SECONDS": "0.5"}, env_file=None)
    assert fast.sweep_interval.total_seconds() == 0.5
    with pytest.raises(SettingsError, match="COUNTERSIGN_SWEEP_INTERVAL_SECONDS is malformed"):
        load_settings({"COUNTERSIGN_SWEEP_INTERVAL_SECONDS": "0"}, env_file=None)
