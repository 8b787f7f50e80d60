"""The checkpointer's PostgreSQL pool checks a connection before handing it out, as the store's
pool does: after the server closed its connections (a restart), the next pass gets a live one
instead of failing (issue 24, finding 7)."""

from __future__ import annotations

import asyncpg
from langchain_core.runnables import RunnableConfig

from bot.runtime.checkpoints import open_checkpointer
from bot.store.database import DatabaseUrl
from tests.databases import postgres_database


async def test_a_connection_the_server_closed_is_not_handed_to_a_pass() -> None:
    async with postgres_database() as url:
        opened = await open_checkpointer(DatabaseUrl.checked(url), serde=None)
        try:
            config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
            assert await opened.saver.aget_tuple(config) is None  # the pool's connection works
            name = url.rsplit("/", 1)[-1]
            admin = await asyncpg.connect(url.replace("+asyncpg", "").rsplit("/", 1)[0] + "/test")
            try:  # what a server restart does to every connection it had
                await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = $1 AND pid <> pg_backend_pid()",
                    name,
                )
            finally:
                await admin.close()
            assert await opened.saver.aget_tuple(config) is None  # a new connection, not a dead one
        finally:
            await opened.close()
