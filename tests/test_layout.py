"""The package layout the design names keeps working after the Slack channel became one folder."""

from __future__ import annotations

import importlib


def test_bot_slack_hands_on_the_slack_channel_names() -> None:
    alias = importlib.import_module("bot.slack")
    home = importlib.import_module("channels.slack")
    for name in alias.__all__:
        assert getattr(alias, name) is getattr(home, name), name


def test_channels_slack_makes_slack_channels() -> None:
    home = importlib.import_module("channels.slack")
    assert callable(home.slack_channel)
    assert home.slack_channel.__module__ == "channels.slack.channel"
