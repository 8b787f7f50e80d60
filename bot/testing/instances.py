"""``test_with(Application, instances=2, ...)``: several App instances on one database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager

from bot.app import App
from bot.core.clock import Clock
from bot.security.keys import generate_key
from bot.settings import Settings
from bot.store.database import DatabaseUrl


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
    Without ``countersign_encryption_keys`` in ``settings`` they share one random key made for
    the test on PostgreSQL, as deployed instances share the key of their database.
    """
    if instances < 1:
        raise ValueError("instances must be at least 1")
    shared = _with_a_shared_key(settings or Settings(), database_url)
    async with AsyncExitStack() as stack:
        apps = []
        for _ in range(instances):
            app = await App.create(
                application,
                database_url=database_url,
                clock=clock,
                settings=shared,
                services=services,
            )
            stack.push_async_callback(app.close)
            apps.append(app)
        yield apps


def _with_a_shared_key(settings: Settings, database_url: str) -> Settings:
    """``settings`` with one random key when none is set and the database keeps no key file
    (PostgreSQL): the instances must read what each other wrote."""
    if (settings.countersign_encryption_keys or "").strip() or DatabaseUrl.parse(
        database_url
    ).is_sqlite:
        return settings
    key = generate_key("test-with")
    return settings.model_copy(update={"countersign_encryption_keys": key.entry()})


test_with.__test__ = False  # type: ignore[attr-defined]  # a kit, not a test for pytest to collect
