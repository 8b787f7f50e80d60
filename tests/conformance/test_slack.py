"""The conformance suite for the Slack channel (``tests.conformance.slack_driver``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from tests.conformance.driver import ChannelDriver
from tests.conformance.slack_driver import SlackDriver, slack_driver
from tests.conformance.suite import ChannelConformance


class TestSlackChannel(ChannelConformance):
    driver_type = SlackDriver
    differences: ClassVar[Mapping[str, str]] = {
        "test_a_large_amount_shown_can_be_typed_back": (
            "Slack shows the amount as 1,234.50 and its Edit & approve modal refuses it typed "
            "back ('Enter a number.'); the web takes it"
        ),
        "test_the_question_says_who_asked_and_what_they_asked": (
            "Slack's message names the requester but not what they asked (the request's text)"
        ),
    }

    @pytest.fixture
    async def driver(self, tmp_path: Path) -> AsyncIterator[ChannelDriver]:
        async with slack_driver(tmp_path) as driver:
            yield driver
