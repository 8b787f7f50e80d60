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
    differences: ClassVar[Mapping[str, str]] = {}

    @pytest.fixture
    async def driver(self, tmp_path: Path) -> AsyncIterator[ChannelDriver]:
        async with slack_driver(tmp_path) as driver:
            yield driver
