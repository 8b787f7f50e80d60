"""The conformance suite for the web channel (``tests.conformance.web_driver``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from tests.conformance.driver import ChannelDriver
from tests.conformance.suite import ChannelConformance
from tests.conformance.web_driver import WebDriver, web_driver


class TestWebChannel(ChannelConformance):
    driver_type = WebDriver
    differences: ClassVar[Mapping[str, str]] = {}

    @pytest.fixture
    async def driver(self, tmp_path: Path) -> AsyncIterator[ChannelDriver]:
        async with web_driver(tmp_path) as driver:
            yield driver
