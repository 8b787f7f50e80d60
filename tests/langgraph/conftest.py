"""The App and the outbox the attached-agent tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot import App
from tests.langgraph.kit import OFFICE, Outbox

MEMORY = "sqlite+aiosqlite:///:memory:"
ASK = {"messages": [{"role": "user", "content": "refund order 7"}]}


@pytest.fixture
def outbox() -> Outbox:
    return Outbox()


@pytest.fixture
async def app(outbox: Outbox) -> AsyncIterator[App]:
    async with await App.create(
        OFFICE.application, database_url=MEMORY, services={Outbox: outbox}
    ) as app:
        yield app
