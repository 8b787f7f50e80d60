"""Where a database's encryption keys come from.

- ``COUNTERSIGN_ENCRYPTION_KEYS`` when it is set (on a SQLite file whose key file exists, that
  file's keys are kept after the setting's, to read what was written with them);
- otherwise, on a SQLite file: the key file beside it, made on the first start;
- otherwise, on an in-memory SQLite database: a random key that lives as long as the App;
- otherwise (PostgreSQL): nothing — the start is refused with a ``SettingsError`` saying how
  to make a key. Instances share a PostgreSQL database, so they must share a key, and a key
  file on one machine is not that.

``key_source`` checks the setting at once (no I/O); ``KeySource.load`` reads or makes the key
file, after the database was opened (a database that cannot be opened leaves no key behind).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from bot.core.errors import SettingsError
from bot.security.key_file import key_file_for, load_or_create_key_file, read_key_file
from bot.security.keys import SETTING, KeyRing, parse_key_ring, random_key_ring
from bot.store.database import DatabaseUrl


@dataclass(frozen=True, slots=True)
class KeySource:
    configured: KeyRing | None
    key_file: Path | None
    """The key file of a SQLite file database; None in memory and on PostgreSQL."""

    @property
    def named(self) -> str:
        """Where the keys come from, as a line tells it (``COUNTERSIGN_ENCRYPTION_KEYS``)."""
        if self.configured is not None:
            return SETTING
        if self.key_file is not None:
            return f"the key file {self.key_file.resolve()} ({SETTING} is not set)"
        return "the in-memory database's random key"

    async def load(self, *, holds_rows: Callable[[], Awaitable[bool]] | None = None) -> KeyRing:
        """The keys; a key file is made if there is none, unless ``holds_rows()`` says the
        database already holds rows (written with the key of a file that is now lost: a new key
        could not read them, and the rows written with it would mix two keys nobody has both of).
        """
        if self.key_file is None:
            return self.configured or random_key_ring()
        if self.configured is None:
            if holds_rows is not None:
                await self._refuse_a_lost_key_file(holds_rows)
            return (await asyncio.to_thread(load_or_create_key_file, self.key_file)).ring
        if not await asyncio.to_thread(self.key_file.exists):
            return self.configured
        older = await asyncio.to_thread(read_key_file, self.key_file)
        return self.configured.with_older(older.keys, source=f"the key file {self.key_file}")

    async def _refuse_a_lost_key_file(self, holds_rows: Callable[[], Awaitable[bool]]) -> None:
        assert self.key_file is not None
        if await asyncio.to_thread(self.key_file.exists) or not await holds_rows():
            return
        raise SettingsError(
            f"the key file {self.key_file.resolve()} is missing but the database holds encrypted "
            f"rows: restore the file (from the backup of the database) or set {SETTING} to the "
            "key it held"
        )


def key_source(database_url: str | DatabaseUrl, configured: str | None) -> KeySource:
    """The keys of ``database_url``; ``SettingsError`` at once if they can't be had."""
    url = DatabaseUrl.of(database_url)
    text = (configured or "").strip()
    ring = parse_key_ring(text) if text else None
    if not url.is_sqlite:
        if ring is None:
            raise SettingsError(
                f"{SETTING} is not set, and PostgreSQL needs it (one key shared by every "
                f"instance): run 'python -m bot keygen' and set {SETTING} to the line it prints"
            )
        return KeySource(configured=ring, key_file=None)
    path = url.sqlite_path
    return KeySource(configured=ring, key_file=None if path is None else key_file_for(path))
