"""Whether the key ring opens what the database holds: checked at start, and by ``/readyz``.

A ring that is not the database's (another deployment's key, a new ``keygen`` line, an old key
dropped before ``reencrypt`` moved its values) would let the App start and say it is ready,
then fail every read of a pause (``/pending`` showing nothing, an ``UnknownKeyError`` in the
log). So the App opens a few stored values of each kind before it serves: of each payload table
and each LangGraph checkpoint table, the row first and last by its primary key (two index
look-ups a table: as cheap on a million rows as on ten), every sealed value of those rows. A
value under a key id the ring lacks, or one the ring's key of that id does not open, is the
problem, said in one line naming where the keys came from (``COUNTERSIGN_ENCRYPTION_KEYS``).
A value stored in clear (before encryption was turned on) is not the ring's to open: left out.

The rows first and last by key are where stale keys live: the oldest rows were written first
(and are the last ``reencrypt`` would have moved), the newest with the current key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy import Connection, inspect, select, text

from bot.core.clock import Clock
from bot.core.errors import CountersignError
from bot.security.checkpoint_serde import RingCipher
from bot.security.cipher import Sealer
from bot.security.codec import EncryptingCodec, payload_key_id
from bot.security.errors import UnknownKeyError
from bot.security.keys import KeyRing
from bot.security.reencrypt import (
    PAYLOAD_COLUMNS,
    POSTGRES_CHECKPOINT_COLUMNS,
    SQLITE_CHECKPOINT_COLUMNS,
)
from bot.store.database import Database, DatabaseUrl, checkpoint_path

KEPT: Final = timedelta(seconds=30)
"""How long ``/readyz`` keeps an answer of the check (on the App's clock)."""
READY_NAME: Final = "encryption_keys"
"""The check's name among ``/readyz``'s problems."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SealedValue:
    """One stored value: a payload's text, or a checkpoint's type and bytes; ``where`` is its
    table and column (``cs_pauses.ask``)."""

    where: str
    text: str | None = None
    type_tag: str | None = None
    blob: bytes | None = None


Sampler = Callable[[], Awaitable[Sequence[SealedValue]]]
"""Reads a few stored values (one round trip per table at most)."""


def ring_problem(ring: KeyRing, values: Iterable[SealedValue], *, source: str) -> str | None:
    """The first of ``values`` the ring does not open, as one line naming ``source`` (where
    the keys came from); ``None`` when it opens them all."""
    payloads = EncryptingCodec(ring, read_plaintext=True)
    checkpoints = RingCipher(Sealer(ring))
    for value in values:
        try:
            if value.text is not None:
                payloads.decode(value.text)
            elif value.type_tag is not None and value.blob is not None:
                _, plus, cipher = value.type_tag.partition("+")
                if plus:
                    checkpoints.decrypt(cipher, value.blob)
        except UnknownKeyError as error:
            return (
                f"{source} cannot open the stored data: values in {value.where} are encrypted "
                f"under key id {error.key_id!r}, which it does not hold: put that key back "
                "(after the current key), then run 'python -m bot reencrypt'"
            )
        except CountersignError:  # DecryptionError: the key of that id is not the one used
            key_id = _key_id(value) or "?"
            return (
                f"{source} cannot open the stored data: values in {value.where} under key id "
                f"{key_id!r} do not open with the key it gives that id (another key with the "
                "same id?): set the key they were written with"
            )
    return None


def _key_id(value: SealedValue) -> str | None:
    if value.text is not None:
        return payload_key_id(value.text)
    if value.type_tag is None:
        return None
    return value.type_tag.partition("+")[2].partition(".")[2] or None


async def payload_samples(database: Database) -> list[SealedValue]:
    """The sealed values of the first and last row of each of our payload tables."""

    def read(connection: Connection) -> list[SealedValue]:
        present = set(inspect(connection).get_table_names())
        found: list[SealedValue] = []
        for target in PAYLOAD_COLUMNS:
            if target.table.name not in present:
                continue
            keys = [target.table.c[k] for k in target.keys]
            columns = [target.table.c[c] for c in target.columns]
            for order in ([k.asc() for k in keys], [k.desc() for k in keys]):
                row = connection.execute(select(*columns).order_by(*order).limit(1)).first()
                for name, stored in zip(target.columns, row or (), strict=False):
                    if isinstance(stored, str):
                        found.append(SealedValue(where=f"{target.table.name}.{name}", text=stored))
        return found

    return await database.transactions.read(read)


FetchOne = Callable[[str], Awaitable["Sequence[object] | None"]]
"""Runs one statement, returns its first row (a checkpointer's own connection)."""


async def checkpoint_samples(fetch_one: FetchOne, *, sqlite: bool) -> list[SealedValue]:
    """The sealed values of the first and last row of LangGraph's checkpoint tables (SQLite's
    or PostgreSQL's), read with ``fetch_one``; the tables are there (the saver made them)."""
    found = []
    for target in SQLITE_CHECKPOINT_COLUMNS if sqlite else POSTGRES_CHECKPOINT_COLUMNS:
        for order in ("ASC", "DESC"):
            keys = ", ".join(f"{key} {order}" for key in target.keys)
            row = await fetch_one(
                f"SELECT {target.type_column}, {target.blob_column} "
                f"FROM {target.table.name} ORDER BY {keys} LIMIT 1"
            )
            if (
                row is not None
                and isinstance(row[0], str)
                and isinstance(row[1], bytes | memoryview)
            ):
                found.append(
                    SealedValue(where=target.table.name, type_tag=row[0], blob=bytes(row[1]))
                )
    return found


def database_samplers(database: Database) -> list[Sampler]:
    """What to read of ``database`` itself: its payloads, and on PostgreSQL its checkpoints
    (on SQLite they are in the file beside it: the checkpointer's ``sample``, or
    :func:`checkpoint_file_sampler`)."""
    samplers: list[Sampler] = [lambda: payload_samples(database)]
    if not database.is_sqlite:
        samplers.append(lambda: _checkpoints_in(database))
    return samplers


async def _checkpoints_in(database: Database) -> list[SealedValue]:
    async def fetch_one(statement: str) -> Sequence[object] | None:
        def read(connection: Connection) -> Sequence[object] | None:
            return connection.execute(text(statement)).first()

        return await database.transactions.read(read)

    return await checkpoint_samples(fetch_one, sqlite=database.is_sqlite)


def checkpoint_file_sampler(database: Database) -> Sampler | None:
    """The checkpoints in the file beside a SQLite file ``database``, opened for the reading
    (``reencrypt``, which has no checkpointer); ``None`` elsewhere."""
    if database.sqlite_path is None:
        return None
    path = checkpoint_path(database.sqlite_path)

    async def sample() -> list[SealedValue]:
        if not await asyncio.to_thread(path.is_file):  # never create it: nothing checkpointed
            return []
        async with Database.open(DatabaseUrl.sqlite_file(path)) as checkpoints:
            return await _checkpoints_in(checkpoints)

    return sample


class KeyCheck:
    """The ring against what the database holds: :meth:`problem` reads now, :meth:`kept`
    answers from the last reading for ``KEPT`` (``/readyz``, polled every second or so)."""

    def __init__(
        self, ring: KeyRing, samplers: Sequence[Sampler], *, source: str, clock: Clock
    ) -> None:
        self._ring = ring
        self._samplers = tuple(samplers)
        self._source = source
        self._clock = clock
        self._read_at: datetime | None = None
        self._problem: str | None = None

    async def problem(self) -> str | None:
        """The ring's problem with what is stored now, or ``None``."""
        values = [value for sampler in self._samplers for value in await sampler()]
        self._problem = ring_problem(self._ring, values, source=self._source)
        self._read_at = self._clock.now()
        return self._problem

    async def kept(self) -> str | None:
        """:meth:`problem`, read again only when the last reading is ``KEPT`` old."""
        if self._read_at is not None and self._clock.now() - self._read_at < KEPT:
            return self._problem
        return await self.problem()
