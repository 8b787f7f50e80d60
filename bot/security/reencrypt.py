"""Re-encrypt every stored value under the current key: our payload columns and LangGraph's
checkpoint tables (the file beside a SQLite database; the same PostgreSQL database otherwise).

Rows are read in batches in key order (keyset pagination: no row is read twice, none is
skipped); each batch is rewritten in one short write transaction, opened after the batch was
re-encrypted (on SQLite a read transaction that turns into a write fails against a concurrent
writer). A value is only replaced if it is still what was read, so a value an App rewrote
meanwhile (with the current key anyway) is left alone: the command may run while instances
serve. Values already under the current key are verified and kept, so running it again moves
nothing. Values stored in clear (written before encryption was turned on) are sealed too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    LargeBinary,
    RowMapping,
    String,
    Table,
    and_,
    column,
    inspect,
    select,
    table,
    tuple_,
    update,
)
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.expression import TableClause

from bot.core.errors import CountersignError
from bot.security.checkpoint_serde import CheckpointResealer
from bot.security.codec import EncryptingCodec
from bot.security.errors import ReencryptError
from bot.security.keys import KeyRing
from bot.store.database import Database, DatabaseUrl, checkpoint_path
from bot.store.tables import (
    batch_lines,
    executions,
    grants,
    installations,
    outbox,
    pause_answers,
    pauses,
    tool_runs,
)

DEFAULT_BATCH_SIZE = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class PayloadColumns:
    """Text columns our store writes through its codec."""

    table: Table
    keys: tuple[str, ...]
    columns: tuple[str, ...]


PAYLOAD_COLUMNS: tuple[PayloadColumns, ...] = (
    PayloadColumns(
        table=pauses,
        keys=("id",),
        columns=("ask", "answer", "tool_result", "unread_reply", "approvals", "handovers"),
    ),
    PayloadColumns(table=executions, keys=("execution_id",), columns=("input", "output", "error")),
    PayloadColumns(
        table=pause_answers,
        keys=("id",),
        columns=("step", "decision", "ran_with", "approvals", "handovers"),
    ),
    PayloadColumns(table=tool_runs, keys=("run_key",), columns=("result",)),
    PayloadColumns(table=grants, keys=("grant_id",), columns=("argument_constraint",)),
    PayloadColumns(
        table=installations,
        keys=("client_id", "enterprise_id", "team_id", "user_id"),
        columns=("document",),
    ),
    PayloadColumns(table=outbox, keys=("entry_id",), columns=("payload",)),
    PayloadColumns(table=batch_lines, keys=("tenant_id", "user_id"), columns=("said",)),
)
"""Every payload column of ``bot.store.sql``, ``bot.store.tool_runs``, ``bot.store.grants``,
``bot.store.installations``, ``bot.store.outbox`` and ``bot.store.batch_lines`` (a test checks
no text column is forgotten)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointColumns:
    """A LangGraph table of ``(type, bytes)`` pairs written through the checkpointer's serde."""

    table: TableClause
    keys: tuple[str, ...]
    type_column: str
    blob_column: str


def _checkpoint_table(name: str, keys: Sequence[str], blob: str) -> CheckpointColumns:
    key_columns = [column(k, Integer if k == "idx" else String) for k in keys]
    return CheckpointColumns(
        table=table(name, *key_columns, column("type", String), column(blob, LargeBinary)),
        keys=tuple(keys),
        type_column="type",
        blob_column=blob,
    )


_WRITE_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx")
SQLITE_CHECKPOINT_COLUMNS = (
    _checkpoint_table("checkpoints", _WRITE_KEYS[:3], "checkpoint"),
    _checkpoint_table("writes", _WRITE_KEYS, "value"),
)
POSTGRES_CHECKPOINT_COLUMNS = (
    _checkpoint_table(
        "checkpoint_blobs", ("thread_id", "checkpoint_ns", "channel", "version"), "blob"
    ),
    _checkpoint_table("checkpoint_writes", _WRITE_KEYS, "blob"),
)
"""PostgreSQL's ``checkpoints`` table keeps no channel value (``SealedPostgresSaver``)."""


@dataclass(frozen=True, slots=True)
class ReencryptReport:
    key_id: str
    moved: Mapping[str, int]
    """Values moved to the current key, by table (every table looked at, 0 included)."""

    @property
    def total(self) -> int:
        return sum(self.moved.values())


Rewrite = Callable[[RowMapping], tuple[dict[str, Any], int]]
"""A row's replaced columns and how many values that is."""


async def reencrypt_database(
    database_url: str | DatabaseUrl, ring: KeyRing, *, batch_size: int = DEFAULT_BATCH_SIZE
) -> ReencryptReport:
    """Move every stored value of ``database_url`` to ``ring``'s current key."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    async with Database.open(database_url) as database:
        return await reencrypt(database, ring, batch_size=batch_size)


async def reencrypt(
    database: Database, ring: KeyRing, *, batch_size: int = DEFAULT_BATCH_SIZE
) -> ReencryptReport:
    """Move every stored value of an open ``database`` to ``ring``'s current key."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    codec = EncryptingCodec(ring, read_plaintext=True)
    resealer = CheckpointResealer(ring)
    moved: dict[str, int] = {}
    engine = database.engine
    present = await _table_names(engine)
    for payload in PAYLOAD_COLUMNS:
        if payload.table.name in present:
            moved[payload.table.name] = await _payloads(engine, payload, codec, batch_size)
    if not database.is_sqlite:
        await _checkpoints(engine, POSTGRES_CHECKPOINT_COLUMNS, resealer, batch_size, moved)
    if database.sqlite_path is not None:
        path = checkpoint_path(database.sqlite_path)
        await _sqlite_checkpoints(path, resealer, batch_size, moved)
    return ReencryptReport(key_id=ring.current.key_id, moved=moved)


async def _sqlite_checkpoints(
    path: Path, resealer: CheckpointResealer, batch_size: int, moved: dict[str, int]
) -> None:
    if not await asyncio.to_thread(path.is_file):  # never create it: nothing was checkpointed
        return
    async with Database.open(DatabaseUrl.sqlite_file(path)) as checkpoints:
        await _checkpoints(
            checkpoints.engine, SQLITE_CHECKPOINT_COLUMNS, resealer, batch_size, moved
        )


async def _checkpoints(
    engine: AsyncEngine,
    targets: Sequence[CheckpointColumns],
    resealer: CheckpointResealer,
    batch_size: int,
    moved: dict[str, int],
) -> None:
    present = await _table_names(engine)
    for target in targets:
        if target.table.name in present:
            moved[target.table.name] = await _sweep(
                engine,
                target.table,
                target.keys,
                (target.type_column, target.blob_column),
                _checkpoint_rewrite(target, resealer),
                batch_size,
            )


def _checkpoint_rewrite(target: CheckpointColumns, resealer: CheckpointResealer) -> Rewrite:
    def rewrite(row: RowMapping) -> tuple[dict[str, Any], int]:
        type_tag, blob = row[target.type_column], row[target.blob_column]
        if type_tag is None or blob is None or type_tag == "empty":
            return {}, 0
        resealed = resealer.reseal(type_tag, bytes(blob))
        if resealed is None:
            return {}, 0
        return {target.type_column: resealed[0], target.blob_column: resealed[1]}, 1

    return rewrite


async def _payloads(
    engine: AsyncEngine, target: PayloadColumns, codec: EncryptingCodec, batch_size: int
) -> int:
    def rewrite(row: RowMapping) -> tuple[dict[str, Any], int]:
        changes = {}
        for name in target.columns:
            if row[name] is not None and (new := codec.reseal(row[name])) is not None:
                changes[name] = new
        return changes, len(changes)

    return await _sweep(engine, target.table, target.keys, target.columns, rewrite, batch_size)


async def _sweep(
    engine: AsyncEngine,
    source: TableClause,
    keys: Sequence[str],
    values: Sequence[str],
    rewrite: Rewrite,
    batch_size: int,
) -> int:
    key_columns = [source.c[k] for k in keys]
    query = select(*key_columns, *(source.c[v] for v in values)).order_by(*key_columns)
    last: tuple[Any, ...] | None = None
    moved = 0
    while True:
        async with engine.connect() as connection:
            page = query if last is None else query.where(_after(key_columns, last))
            rows = (await connection.execute(page.limit(batch_size))).mappings().all()
        rewritten = [(row, *_rewritten(source, keys, row, rewrite)) for row in rows]
        async with engine.begin() as connection:  # a write from its first statement (SQLite)
            for row, changes, count in rewritten:
                if not changes:
                    continue
                still = [source.c[k] == row[k] for k in keys]
                still += [source.c[name] == row[name] for name in changes]
                result = await connection.execute(
                    update(source).where(and_(*still)).values(**changes)
                )
                moved += count if result.rowcount == 1 else 0
        if len(rows) < batch_size:
            return moved
        last = tuple(rows[-1][k] for k in keys)


def _rewritten(
    source: TableClause, keys: Sequence[str], row: RowMapping, rewrite: Rewrite
) -> tuple[dict[str, Any], int]:
    try:
        return rewrite(row)
    except CountersignError as error:
        where = ", ".join(f"{k}={row[k]!r}" for k in keys)  # ids only: no pause id is a key
        raise ReencryptError(f"{source.name} row ({where}): {error.message}") from error


def _after(key_columns: Sequence[ColumnElement[Any]], last: tuple[Any, ...]) -> Any:
    if len(key_columns) == 1:
        return key_columns[0] > last[0]
    return tuple_(*key_columns) > tuple_(*last)


async def _table_names(engine: AsyncEngine) -> set[str]:
    async with engine.connect() as connection:
        names = await connection.run_sync(lambda sync: inspect(sync).get_table_names())
    return set(names)
