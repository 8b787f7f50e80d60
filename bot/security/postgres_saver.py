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

A thread the plain saver wrote keeps its inline values: where a checkpoint read to be continued
(``aget_tuple``, as every run starts) holds one (a value with no blob), it is written as its
blob at its version then (``ON CONFLICT DO NOTHING``), once, sealed; a later checkpoint of ours
that leaves the channel unchanged then refers to a blob that is there. Where the mirror is off,
the parent's ``aput`` is given every boxed value at every checkpoint instead, changed or not.

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
from contextvars import ContextVar
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
        if not MIRROR_IN_USE:
            return await super().aget_tuple(config)
        inline: list[_InlineValues] = []
        kept = _INLINE_FOUND.set(inline)
        try:
            found = await super().aget_tuple(config)
        finally:
            _INLINE_FOUND.reset(kept)
        if inline:  # written by the plain saver: its inline values become blobs of ours
            async with self._cursor(pipeline=True) as cur:
                for thread_id, checkpoint_ns, values, versions in inline:
                    await cur.executemany(
                        self.UPSERT_CHECKPOINT_BLOBS_SQL,
                        self._dump_blobs(thread_id, checkpoint_ns, values, versions),
                    )
        return found

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
        if MIRROR_IN_USE:  # takes primitive values as blobs itself, when they change
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
        primitive value a blob like any other: written when its channel changed (an unchanged
        one has its blob: ours, or one ``aget_tuple`` wrote for a value the plain saver kept
        inline)."""
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
        for k, v in checkpoint["channel_values"].items():
            if isinstance(v, _DeltaSnapshot):
                blob_values[k] = copy["channel_values"].pop(k)
                copy["channel_values"][k] = True
            elif v is not None:  # a str, int, float or bool too: the parent keeps those inline
                blob_values[k] = copy["channel_values"].pop(k)
        async with self._cursor(pipeline=True) as cur:
            if blob_versions := {k: v for k, v in new_versions.items() if k in blob_values}:
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
        module's docstring); the values the plain saver kept inline noted for ``aget_tuple``."""
        if not MIRROR_IN_USE:
            return await super()._load_checkpoint_tuple(value)
        noting = _INLINE_FOUND.get()
        if noting is not None and (inline := _inline_values(value)) is not None:
            noting.append(inline)
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


_InlineValues = tuple[str, str, dict[str, Any], ChannelVersions]
"""A checkpoint's values kept inline by the plain saver: its thread, namespace, the values and
their versions."""

_INLINE_FOUND: ContextVar[list[_InlineValues] | None] = ContextVar("inline_found", default=None)
"""Where ``_load_checkpoint_tuple`` notes them, while ``aget_tuple`` reads a checkpoint."""


def _inline_values(value: DictRow) -> _InlineValues | None:
    """The values of a checkpoint row kept inline, not as blobs: the plain saver's. Ours keeps
    only ``None`` inline (and ``True`` for a delta channel, whose blob is there)."""
    checkpoint = value["checkpoint"]
    inline = checkpoint.get("channel_values") or {}
    if not any(v is not None for v in inline.values()):
        return None
    blobbed = {channel.decode() for channel, _, _ in value["channel_values"] or ()}
    versions = checkpoint["channel_versions"]
    plain = {
        k: v for k, v in inline.items() if v is not None and k not in blobbed and k in versions
    }
    if not plain:
        return None
    return (
        value["thread_id"],
        value["checkpoint_ns"],
        plain,
        {k: versions[k] for k in plain},
    )


async def _try_lock(connection: AsyncConnection[DictRow]) -> bool:
    cursor = await connection.execute("SELECT pg_try_advisory_lock(%s) AS taken", (SCHEMA_LOCK,))
    row = await cursor.fetchone()
    return bool(row and row["taken"])
