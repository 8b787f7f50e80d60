"""The key file beside an embedded SQLite database (``countersign.db`` → ``countersign.db.key``).

Made once, on the first start without ``COUNTERSIGN_ENCRYPTION_KEYS``: a new key is written to
a private temporary file (``O_CREAT | O_EXCL``, mode 0600), flushed to disk, then published
under the final name with ``link``, which fails if the name exists. So a key file is complete
from the moment it is visible, and of two processes starting at once one key wins and both use
it. Later starts read it. It holds key entries one a line, current first, in the format of the
setting (see ``bot.security.keys``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from bot.core.errors import SettingsError
from bot.security.keys import SETTING, KeyRing, generate_key, parse_key_ring

log = logging.getLogger("countersign.security")

_HEADER = (
    "# Countersign's encryption key for {database}. Back it up with the database: without it,\n"
    "# what is stored there cannot be read. Current key first; python -m bot keygen makes one.\n"
)


def key_file_for(database: Path) -> Path:
    """Where the key of a SQLite database file lives: beside it, ``<database>.key``."""
    return database.with_name(f"{database.name}.key")


@dataclass(frozen=True, slots=True)
class KeyFileRing:
    ring: KeyRing
    created: bool


def load_or_create_key_file(path: Path) -> KeyFileRing:
    """The key ring in ``path``, made first (once, atomically) if there is none. Blocking I/O."""
    created = not path.exists() and _create(path)
    if created:
        log.warning(
            "generated a new encryption key in %s (mode 0600) because %s is not set: "
            "back this file up with the database, without it the data cannot be read",
            path.resolve(),
            SETTING,
        )
    return KeyFileRing(ring=read_key_file(path), created=created)


def _create(path: Path) -> bool:
    """Publish a new key file at ``path``; False if another process published one first."""
    key = generate_key()
    text = _HEADER.format(database=path.name.removesuffix(".key")) + key.entry() + "\n"
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(descriptor, text.encode("utf-8"))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False
        _sync_folder(path.parent)
        return True
    except OSError as error:
        raise SettingsError(
            f"the encryption key file {path} could not be created ({error.strerror or error}): "
            f"set {SETTING} instead (python -m bot keygen)"
        ) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def read_key_file(path: Path) -> KeyRing:
    """The key ring in an existing key file. Blocking I/O."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SettingsError(
            f"the encryption key file {path} cannot be read: {error.strerror or error}"
        ) from None
    except UnicodeDecodeError:
        raise SettingsError(
            f"the encryption key file {path} is not a key file (not UTF-8 text)"
        ) from None
    if os.name == "posix" and stat.S_IMODE(mode) & 0o077:
        log.warning("the encryption key file %s is readable by others: chmod 600 it", path)
    return parse_key_ring(text, source=f"the key file {path}")


def _sync_folder(folder: Path) -> None:
    """Make the new name durable (POSIX); best effort elsewhere."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
