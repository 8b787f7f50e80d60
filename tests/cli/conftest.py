"""Fixtures of the command-line tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cli.processes import StubThread
from tests.slack.stub import SlackStub


@pytest.fixture(scope="module")
def slack_api() -> Iterator[SlackStub]:
    """A Slack Web API stub for processes: its ``api_url`` is SLACK_API_URL; script its answers
    with ``stub.errors``."""
    with StubThread() as stub:
        yield stub
