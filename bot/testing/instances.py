"""``test_with(Application, instances=2, ...)``: several App instances on one database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager

from bot.app import App
from bot.core.clock import Clock
from bot.settings import Settings


@asynccontextmanager
async def test_with(
    application: type,
    *,
    instances: int = 2,
    database_url: str,
    clock: Clock | None = None,
    settings: Settings | None = None,
    services: Mapping[type, object] | None = None,
) -> AsyncIterator[list[App]]:
    """Start ``instances`` Apps on ``database_url`` (a SQLite file or PostgreSQL), close them after.

    Each instance is what a separate process would be: its own engine, checkpointer and lease
    owner; they share only the database (and ``services``, e.g. a recording channel's inbox).
    """
    if instances < 1:
        raise ValueError("instances must be at least 1")
    async with AsyncExitStack() as stack:
        apps = []
        for _ in range(instances):
            app = await App.create(
                application,
                database_url=database_url,
                clock=clock,
                settings=settings or Settings(),
                services=services,
            )
            stack.push_async_callback(app.close)
            apps.append(app)
        yield apps


test_with.__test__ = False  # type: ignore[attr-defined]  # a kit, not a test for pytest to collect
