"""LangGraph's PostgreSQL saver, with every channel value stored through the serde.

``AsyncPostgresSaver`` keeps a channel's value *inline* in the ``checkpoints`` JSONB column when
it is a ``str``, ``int``, ``float`` or ``bool``, without the serde: an encrypting serde would
never see it (our workflow state's ``text`` — the request and the agent's answer — would be
stored in clear). This saver stores such values as blobs in ``checkpoint_blobs``, sealed like
the rest: its mirror of the parent's ``aput`` (below) takes them as blobs itself; the parent's
own, where the mirror is off, is given them boxed and unboxes them when it dumps the blobs.
``None`` stays inline (nothing to hide). Reading is unchanged: blobs are read as always.

Its ``setup`` (LangGraph's migrations) runs under the advisory lock of our own migrations
(``SCHEMA_LOCK``): the plain one, run by two instances at once on a new database, has one of
them fail with a ``UniqueViolation`` (both create the tables, both record version 0).

A boxed channel's blob is written at every checkpoint, not only when the channel changed
(``ON CONFLICT DO NOTHING`` makes a repeat free): a thread whose value was inline in a checkpoint
written by the plain saver keeps it.

It (de)serialises on the event loop, without the parent's hand-off to a worker thread
(``asyncio.to_thread``) around dumping a checkpoint's blobs, dumping a task's writes and loading
a checkpoint's pending writes. A pause cycle makes about eleven such hand-offs; each wakes a
thread, passes the GIL to it and back, and wakes the loop again: on the pause cycle of
``tests.benchmarks.cycle_cost`` they cost about 1.5 ms of CPU of a 14 ms cycle (issue 32). The
thread buys the loop little: the work holds the GIL (msgpack, the serde's Python hooks, the
sealing) but for the interpreter's switch interval, the parent already loads a checkpoint's
blobs — its largest values, the messages — on the loop, and LangGraph's ``AsyncSqliteSaver`` and
``InMemorySaver`` (de)serialise on the loop too. The three methods mirror the parent's own
(``_MIRRORED``: the parent's source, digested); a LangGraph release that changes any of them
turns the mirror off and the parent's methods run as they are (``MIRROR_IN_USE`` says which).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.postgres import _ainternal
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.types import _DeltaSnapshot
from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from bot.store.migrations import SCHEMA_LOCK, until_taken
from bot.store.new_threads import NewThreads


@dataclass(frozen=True, slots=True)
class _Inline:
    """A primitive channel value the parent would have kept inline."""

    value: str | int | float


def source_digest(method: Any) -> str:
    """A digest of a method's source: what the mirror below was written against."""
    return hashlib.sha256(inspect.getsource(method).encode()).hexdigest()[:16]


# the parent's methods this module mirrors without their thread hand-offs, as of
# langgraph-checkpoint-postgres 3.2.0
_MIRRORED = {
    "aput": "c685c7a8c88b7431",
    "aput_writes": "a2970ab04a7d7d5d",
    "_load_checkpoint_tuple": "507a19e7faee9d0d",
}


def _mirror_matches() -> bool:
    try:
        return all(
            source_digest(getattr(AsyncPostgresSaver, name)) == digest
            for name, digest in _MIRRORED.items()
        )
    except (OSError, TypeError, AttributeError):  # no source to read: run the parent's
        return False


MIRROR_IN_USE = _mirror_matches()


class SealedPostgresSaver(AsyncPostgresSaver):
    new_threads: NewThreads | None = None
    """Threads whose first read is answered without the database (``bot.store.new_threads``)."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        if self.new_threads is not None and self.new_threads.known_empty(config):
            return None
        return await super().aget_tuple(config)

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
        if MIRROR_IN_USE:  # takes primitive values as blobs itself
            return await self._put(config, checkpoint, metadata, new_versions)
        values = checkpoint["channel_values"]
        boxed = {k for k, v in values.items() if isinstance(v, str | int | float)}
        if not boxed:
            return await super().aput(config, checkpoint, metadata, new_versions)
        sealed = checkpoint.copy()
        sealed["channel_values"] = {k: _Inline(v) if k in boxed else v for k, v in values.items()}
        versions = checkpoint["channel_versions"]
        again = {k: versions[k] for k in boxed if k in versions}
        return await super().aput(config, sealed, metadata, {**again, **new_versions})

    async def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """The parent's ``aput``, its blobs dumped on the loop (see the module's docstring), a
        primitive value boxed: a blob like any other, written at the version it has (``aput``'s
        boxing without its copies: a dict and a box per value)."""
        configurable = config["configurable"].copy()
        thread_id = configurable.pop("thread_id")
        checkpoint_ns = configurable.pop("checkpoint_ns")
        checkpoint_id = configurable.pop("checkpoint_id", None)
        copy = checkpoint.copy()
        copy["channel_values"] = copy["channel_values"].copy()
        next_config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }
        blob_values = {}
        versions = checkpoint["channel_versions"]
        again = {}
        for k, v in checkpoint["channel_values"].items():
            if isinstance(v, _DeltaSnapshot):
                blob_values[k] = copy["channel_values"].pop(k)
                copy["channel_values"][k] = True
            elif v is None:
                pass
            elif isinstance(v, str | int | float):  # bool too: kept inline by the parent
                blob_values[k] = copy["channel_values"].pop(k)
                if k in versions:
                    again[k] = versions[k]
            else:
                blob_values[k] = copy["channel_values"].pop(k)
        written = {**again, **new_versions} if again else new_versions
        async with self._cursor(pipeline=True) as cur:
            if blob_versions := {k: v for k, v in written.items() if k in blob_values}:
                await cur.executemany(
                    self.UPSERT_CHECKPOINT_BLOBS_SQL,
                    self._dump_blobs(thread_id, checkpoint_ns, blob_values, blob_versions),
                )
            await cur.execute(
                self.UPSERT_CHECKPOINTS_SQL,
                (
                    thread_id,
                    checkpoint_ns,
                    checkpoint["id"],
                    checkpoint_id,
                    Jsonb(copy),
                    Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
                ),
            )
        return next_config

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """The parent's, the writes dumped on the loop (see the module's docstring)."""
        if not MIRROR_IN_USE:
            return await super().aput_writes(config, writes, task_id, task_path)
        query = (
            self.UPSERT_CHECKPOINT_WRITES_SQL
            if all(w[0] in WRITES_IDX_MAP for w in writes)
            else self.INSERT_CHECKPOINT_WRITES_SQL
        )
        configurable = config["configurable"]
        params = self._dump_writes(
            configurable["thread_id"],
            configurable["checkpoint_ns"],
            configurable["checkpoint_id"],
            task_id,
            task_path,
            writes,
        )
        async with self._cursor(pipeline=True) as cur:
            await cur.executemany(query, params)

    async def _load_checkpoint_tuple(self, value: DictRow) -> CheckpointTuple:
        """The parent's, the pending writes loaded on the loop as its blobs are (see the
        module's docstring)."""
        if not MIRROR_IN_USE:
            return await super()._load_checkpoint_tuple(value)
        return CheckpointTuple(
            {
                "configurable": {
                    "thread_id": value["thread_id"],
                    "checkpoint_ns": value["checkpoint_ns"],
                    "checkpoint_id": value["checkpoint_id"],
                }
            },
            cast(
                Checkpoint,
                {
                    **value["checkpoint"],
                    "channel_values": {
                        **(value["checkpoint"].get("channel_values") or {}),
                        **self._load_blobs(value["channel_values"]),
                    },
                },
            ),
            value["metadata"],
            (
                {
                    "configurable": {
                        "thread_id": value["thread_id"],
                        "checkpoint_ns": value["checkpoint_ns"],
                        "checkpoint_id": value["parent_checkpoint_id"],
                    }
                }
                if value["parent_checkpoint_id"]
                else None
            ),
            self._load_writes(value["pending_writes"]),
        )

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
