"""The conformance suite for the terminal channel (``tests.conformance.terminal_driver``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import ClassVar

import pytest

from tests.conformance.driver import ChannelDriver
from tests.conformance.suite import ChannelConformance
from tests.conformance.terminal_driver import TerminalDriver, terminal_driver


class TestTerminalChannel(ChannelConformance):
    driver_type = TerminalDriver
    differences: ClassVar[Mapping[str, str]] = {
        "test_a_large_amount_shown_can_be_typed_back": (
            "the terminal takes an edit as a decision through App.answer, where a value as shown "
            "(1,234.50) is no number; the terminal has no form that reads it back "
            "(channels.kit.values.typed_number), as Slack's modal and the web's form do"
        ),
    }

    @pytest.fixture
    async def driver(self, tmp_path: Path) -> AsyncIterator[ChannelDriver]:
        async with terminal_driver(tmp_path) as driver:
            yield driver
