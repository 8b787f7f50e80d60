"""``App.create`` opens everything on one ``AsyncExitStack``: a start that fails late releases
the database engine, the store's worker threads and the checkpointer it had opened."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot import App
from bot.store.database import Database
from bot.testing import mock_llm
from tests.conftest import NO_SETTINGS
from tests.office import OfficeAgent, OfficeApplication


async def test_a_start_that_fails_late_releases_what_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bot.wiring as wiring
    from bot.runtime.checkpoints import open_checkpointer

    released: list[str] = []

    async def checkpointer(*args: Any, **kwargs: Any) -> Any:
        opened = await open_checkpointer(*args, **kwargs)
        close = opened.close

        async def closing() -> None:
            released.append("checkpointer")
            await close()

        opened.close = closing
        return opened

    close_database = Database.close

    async def closing_database(self: Database) -> None:
        released.append("database")
        await close_database(self)

    dispose = AsyncEngine.dispose

    async def disposing(self: AsyncEngine, close: bool = True) -> None:
        released.append("engine")
        await dispose(self, close)

    def no_graphs(*args: Any) -> Any:
        raise RuntimeError("the graphs could not be built")

    monkeypatch.setattr(wiring, "open_checkpointer", checkpointer)
    monkeypatch.setattr(Database, "close", closing_database)
    monkeypatch.setattr(AsyncEngine, "dispose", disposing)
    monkeypatch.setattr(wiring, "_build_graphs", no_graphs)
    mock_llm(OfficeAgent)  # no provider needed
    threads_before = ours()

    with pytest.raises(RuntimeError, match="graphs could not be built"):
        await App.create(
            OfficeApplication,
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'x.db'}",
            settings=NO_SETTINGS,
        )

    # last opened, first closed: the checkpointer, then the database (its worker threads, then
    # its engine)
    assert released == ["checkpointer", "database", "engine"]
    await asyncio.sleep(0.2)  # a closed worker thread ends on its own turn
    assert ours() <= threads_before, [t.name for t in threading.enumerate()]


def ours() -> int:
    """Live threads but asyncio's default executor's (the loop's own, not the App's)."""
    return sum(1 for t in threading.enumerate() if not t.name.startswith("asyncio_"))
