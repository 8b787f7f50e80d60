"""LangGraph's PostgreSQL saver, with every channel value stored through the serde.

``AsyncPostgresSaver`` keeps a channel's value *inline* in the ``checkpoints`` JSONB column when
it is a ``str``, ``int``, ``float`` or ``bool``, without the serde: an encrypting serde would
never see it (our workflow state's ``text`` — the request and the agent's answer — would be
stored in clear). This saver boxes such values so the parent moves them to
``checkpoint_blobs``, and unboxes them when the blobs are dumped, so they are sealed like the
rest. ``None`` stays inline (nothing to hide). Reading is unchanged: blobs are read as always.

Its ``setup`` (LangGraph's migrations) runs under the advisory lock of our own migrations
(``SCHEMA_LOCK``): the plain one, run by two instances at once on a new database, has one of
them fail with a ``UniqueViolation`` (both create the tables, both record version 0).

A boxed channel's blob is written at every checkpoint, not only when the channel changed
(``ON CONFLICT DO NOTHING`` makes a repeat free): a thread whose value was inline in a checkpoint
written by the plain saver keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import _ainternal
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection
from psycopg.rows import DictRow

from bot.store.migrations import SCHEMA_LOCK, until_taken


@dataclass(frozen=True, slots=True)
class _Inline:
    """A primitive channel value the parent would have kept inline."""

    value: str | int | float


class SealedPostgresSaver(AsyncPostgresSaver):
    async def setup(self) -> None:
        """LangGraph's migrations, one instance at a time: a session lock, tried until had (see
        ``SCHEMA_LOCK``) on a connection of its own (autocommit: idle between the tries and
        while the migrations run on another connection of the pool), released after them."""
        async with _ainternal.get_connection(self.conn) as connection:
            await until_taken(lambda: _try_lock(connection))
            try:
                await super().setup()
            finally:
                await connection.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        values = checkpoint["channel_values"]
        boxed = {k for k, v in values.items() if isinstance(v, str | int | float)}
        if not boxed:
            return await super().aput(config, checkpoint, metadata, new_versions)
        sealed = checkpoint.copy()
        sealed["channel_values"] = {k: _Inline(v) if k in boxed else v for k, v in values.items()}
        versions = checkpoint["channel_versions"]
        again = {k: versions[k] for k in boxed if k in versions}
        return await super().aput(config, sealed, metadata, {**again, **new_versions})

    def _dump_blobs(
        self,
        thread_id: str,
        checkpoint_ns: str,
        values: dict[str, Any],
        versions: ChannelVersions,
    ) -> list[tuple[str, str, str, str, str, bytes | None]]:
        plain = {k: v.value if isinstance(v, _Inline) else v for k, v in values.items()}
        return super()._dump_blobs(thread_id, checkpoint_ns, plain, versions)


async def _try_lock(connection: AsyncConnection[DictRow]) -> bool:
    cursor = await connection.execute("SELECT pg_try_advisory_lock(%s) AS taken", (SCHEMA_LOCK,))
    row = await cursor.fetchone()
    return bool(row and row["taken"])
