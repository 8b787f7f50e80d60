"""Encryption keys and the key ring: the current key writes, every key of the ring reads.

The format of ``COUNTERSIGN_ENCRYPTION_KEYS`` (and of the key file beside a SQLite database)::

    <key-id>:<base64 of 32 random bytes>[,<key-id>:<base64>...]

The first entry is the current key (every value is written with it); the entries after it are
older keys, kept only to read what was written with them until ``python -m bot reencrypt`` has
moved it to the current key. A key id is 1 to 32 letters, digits, ``-`` or ``_``; it is stored
beside each value, the key itself never is. ``python -m bot keygen`` makes an entry.

Error messages name the setting (or file), the entry's position and at most its key id, never
the key material.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.core.errors import SettingsError
from bot.security.errors import UnknownKeyError

SETTING = "COUNTERSIGN_ENCRYPTION_KEYS"
KEY_BYTES = 32  # AES-256
KEY_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,32}")
KEYGEN_HINT = "make one with: python -m bot keygen"
_QUOTES = "\"'"


@dataclass(frozen=True, slots=True)
class EncryptionKey:
    """One AES-256 key and the id stored beside the values it encrypted."""

    key_id: str
    secret: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not KEY_ID_PATTERN.fullmatch(self.key_id):
            raise ValueError("a key id is 1 to 32 letters, digits, '-' or '_'")
        if len(self.secret) != KEY_BYTES:
            raise ValueError(f"an encryption key is {KEY_BYTES} bytes")

    def entry(self) -> str:
        """The key as one entry of ``COUNTERSIGN_ENCRYPTION_KEYS``: ``<key-id>:<base64>``."""
        return f"{self.key_id}:{base64.b64encode(self.secret).decode('ascii')}"


class KeyRing:
    """The current key first, then older keys; looked up by id."""

    __slots__ = ("_by_id", "_keys")

    def __init__(self, keys: Sequence[EncryptionKey]) -> None:
        if not keys:
            raise ValueError("a key ring holds at least one key")
        by_id: dict[str, EncryptionKey] = {}
        for key in keys:
            if key.key_id in by_id:
                raise ValueError(f"the key id {key.key_id!r} is given twice")
            by_id[key.key_id] = key
        self._keys = tuple(keys)
        self._by_id = by_id

    @property
    def current(self) -> EncryptionKey:
        return self._keys[0]

    @property
    def keys(self) -> tuple[EncryptionKey, ...]:
        return self._keys

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(key.key_id for key in self._keys)

    def key(self, key_id: str) -> EncryptionKey:
        """The key named ``key_id``; ``UnknownKeyError`` (naming the id) if the ring lacks it."""
        found = self._by_id.get(key_id)
        if found is None:
            raise UnknownKeyError(key_id)
        return found

    def with_older(self, keys: Iterable[EncryptionKey], *, source: str) -> KeyRing:
        """This ring, then ``keys`` it does not hold yet (e.g. the key file's, to read old rows)."""
        added = list(self._keys)
        for key in keys:
            mine = self._by_id.get(key.key_id)
            if mine is None:
                added.append(key)
            elif mine.secret != key.secret:
                raise SettingsError(
                    f"{source} and {SETTING} give different keys the same id {key.key_id!r}: "
                    "rename one of them"
                )
        return KeyRing(added)

    def __repr__(self) -> str:
        return f"KeyRing(key_ids={list(self.key_ids)!r})"


def generate_key(key_id: str | None = None) -> EncryptionKey:
    """A new random key; its id is ``key_id`` or a random ``k`` + 8 hex digits."""
    return EncryptionKey(key_id or f"k{secrets.token_hex(4)}", secrets.token_bytes(KEY_BYTES))


def random_key_ring() -> KeyRing:
    """One random key nobody keeps (an in-memory database lives no longer than its App)."""
    return KeyRing([generate_key("memory")])


def parse_key_ring(text: str, *, source: str = SETTING) -> KeyRing:
    """The key ring ``text`` describes (entries separated by commas or new lines).

    Blank entries and ``#`` comment lines are skipped. Any mistake is one ``SettingsError`` line
    naming ``source`` and the entry.
    """
    entries = [
        entry.strip()
        for line in text.splitlines()
        if not line.strip().startswith("#")
        for entry in line.split(",")
        if entry.strip()
    ]
    if not entries:
        raise SettingsError(f"{source} holds no key: {KEYGEN_HINT}")
    keys = [_parse_entry(entry, position, source) for position, entry in enumerate(entries, 1)]
    seen: set[str] = set()
    for key in keys:
        if key.key_id in seen:
            raise SettingsError(f"{source} gives the key id {key.key_id!r} twice")
        seen.add(key.key_id)
    return KeyRing(keys)


def _parse_entry(entry: str, position: int, source: str) -> EncryptionKey:
    where = f"{source} entry {position}"
    if entry[0] in _QUOTES or entry[-1] in _QUOTES:
        # a shell or an env file would have removed them; docker's --env-file and systemd keep them
        raise SettingsError(f"{where} is in quotes: remove the quotes around the value")
    key_id, colon, encoded = entry.partition(":")
    key_id, encoded = key_id.strip(), encoded.strip()
    if not colon or not key_id or not encoded:
        raise SettingsError(f"{where} is not <key-id>:<base64 key>: {KEYGEN_HINT}")
    if not KEY_ID_PATTERN.fullmatch(key_id):
        # not echoed: a reversed entry would put the key where the id belongs
        raise SettingsError(f"{where} has a malformed key id: use 1 to 32 letters, digits, - or _")
    try:
        secret = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise SettingsError(
            f"{where} (key id {key_id!r}) is not valid base64: {KEYGEN_HINT}"
        ) from None
    if len(secret) != KEY_BYTES:
        raise SettingsError(
            f"{where} (key id {key_id!r}) is {len(secret)} bytes, not {KEY_BYTES}: {KEYGEN_HINT}"
        )
    return EncryptionKey(key_id, secret)
