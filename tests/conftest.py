"""Shared fixtures: an office App on in-memory SQLite with a fake clock.

Script the agent's model with ``mock_llm`` first, then ``await make_office()``: the model is
resolved when the App is created.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from bot import App, Settings
from bot.runtime.model_overrides import override_for
from bot.testing import FakeClock, mock_llm
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.office import Inbox, Ledger, OfficeAgent, OfficeApplication


@pytest.fixture(autouse=True)
def _no_redactor_left_behind() -> Iterator[None]:
    """A SlackBot puts its pause-id redactor on our loggers for the life of the process (as a
    served bot should); a test must not leave it for the next test's log assertions."""
    yield
    from channels.slack.redaction import PauseIdRedactor

    for logger in [logging.getLogger(), *logging.root.manager.loggerDict.values()]:
        if isinstance(logger, logging.Logger):
            for found in [f for f in logger.filters if isinstance(f, PauseIdRedactor)]:
                logger.removeFilter(found)


@dataclass
class Office:
    app: App
    clock: FakeClock
    inbox: Inbox
    ledger: Ledger


if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

NO_SETTINGS = Settings(countersign_encryption_keys=TEST_ENCRYPTION_KEYS)
MakeOffice = Callable[..., Awaitable[Office]]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def make_office(clock: FakeClock) -> AsyncIterator[MakeOffice]:
    async with AsyncExitStack() as stack:

        async def make(
            application: type = OfficeApplication,
            database_url: str = "sqlite+aiosqlite:///:memory:",
        ) -> Office:
            if override_for(OfficeAgent) is None:
                mock_llm(OfficeAgent)  # a test that runs no agent still needs its model served
            inbox, ledger = Inbox(), Ledger()
            app = await App.create(
                application,
                database_url=database_url,
                clock=clock,
                settings=NO_SETTINGS,
                services={Inbox: inbox, Ledger: ledger},
            )
            stack.push_async_callback(app.close)
            return Office(app=app, clock=clock, inbox=inbox, ledger=ledger)

        yield make


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The spans finished during the test (OpenTelemetry's SDK, in memory); skipped without
    the SDK (the ``otel`` extra)."""
    pytest.importorskip("opentelemetry.sdk.trace")
    from tests.spans import exporter

    collected = exporter()
    yield collected
    collected.clear()
