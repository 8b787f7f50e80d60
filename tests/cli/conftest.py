"""A Slack Web API stub for processes: it runs on a thread of its own, so a test may block on
``subprocess.run`` while the stub answers the process's ``auth.test``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from tests.slack.stub import SlackStub


class StubThread:
    """A ``SlackStub`` served by an event loop on a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.stub: SlackStub | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> SlackStub:
        self._thread.start()
        stub = SlackStub()
        asyncio.run_coroutine_threadsafe(stub.start(), self.loop).result(10)
        self.stub = stub
        return stub

    def __exit__(self, *_: object) -> None:
        assert self.stub is not None
        asyncio.run_coroutine_threadsafe(self.stub.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


@pytest.fixture(scope="module")
def slack_api() -> Iterator[SlackStub]:
    """The stub's ``api_url`` is SLACK_API_URL; script its answers with ``stub.errors``."""
    with StubThread() as stub:
        yield stub
