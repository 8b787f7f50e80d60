"""The encrypting ``PayloadCodec``: JSON, sealed with AES-256-GCM, written as one text value.

A stored payload reads ``v1.<key-id>.<base64url of nonce || ciphertext || tag>`` (no padding):
the scheme, the id of the key that sealed it, the sealed JSON. Values are always written with
the ring's current key and read with the key their id names. Every payload is bound to the
purpose ``payload`` (associated data), so a checkpoint's ciphertext cannot pose as one.

A value read again is opened once: the same stored pause is read several times in one pause
cycle (asked, looked up for the answer, answered, resumed: its question opened five times, its
answer twice), and a stored text names one value for good (a fresh random nonce per seal), so
the text read is kept with what it opened (``OPENED_KEPT`` of them, each of at most
``OPENED_MAX_CHARS``) and decoded again from there. Only the text read from the database is
the key: a damaged or altered value is a different text, opened (and refused) as any other.

A value that is not sealed (plain JSON written before encryption was turned on) is refused
unless ``read_plaintext`` is set: a plain value could be anything someone wrote into the
database. ``python -m bot reencrypt`` reads such values (and values under older keys) and seals
them with the current key.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from typing import Any

from bot.security.cipher import SCHEME, Sealer
from bot.security.errors import DecryptionError
from bot.security.keys import KeyRing
from bot.store.codec import JsonCodec, PayloadCodec

PAYLOAD_PURPOSE = "payload"
_PREFIX = f"{SCHEME}."
_SEALED = re.compile(rf"{re.escape(SCHEME)}\.([A-Za-z0-9_-]{{1,32}})\.([A-Za-z0-9_-]+)")
OPENED_KEPT = 128
"""Opened values kept per codec: the pauses of a few dozen executions under way at once."""
OPENED_MAX_CHARS = 2048
"""A longer stored text (a large tool result) is opened each time it is read, never kept: at
most ``OPENED_KEPT`` of these sizes are held (a few hundred KiB at worst)."""


def payload_key_id(text: str) -> str | None:
    """The key id a stored payload names, or None if it is not sealed."""
    match = _SEALED.fullmatch(text)
    return match.group(1) if match else None


class EncryptingCodec:
    """A ``PayloadCodec`` sealing what ``inner`` (JSON by default) writes."""

    __slots__ = ("_inner", "_opened", "_purpose", "_read_plaintext", "_sealer")

    def __init__(
        self,
        ring: KeyRing,
        *,
        inner: PayloadCodec | None = None,
        purpose: str = PAYLOAD_PURPOSE,
        read_plaintext: bool = False,
    ) -> None:
        self._sealer = Sealer(ring)
        self._inner: PayloadCodec = inner or JsonCodec()
        self._purpose = purpose
        self._read_plaintext = read_plaintext
        # thread-safe (the store's worker threads and the loop both read); a raise is not kept
        self._opened = functools.lru_cache(maxsize=OPENED_KEPT)(self._open)

    @property
    def current_key_id(self) -> str:
        return self._sealer.current_key_id

    def encode(self, value: Any) -> str:
        return self._seal(self._inner.encode(value))

    def decode(self, text: str) -> Any:
        opened = self._opened(text) if len(text) <= OPENED_MAX_CHARS else self._open(text)
        return self._inner.decode(opened)

    def reseal(self, text: str) -> str | None:
        """``text`` sealed with the current key, or None if it already is."""
        if payload_key_id(text) == self._sealer.current_key_id:
            self._open(text)  # a damaged value is reported, not skipped
            return None
        return self._seal(self._open(text))

    def _seal(self, plain: str) -> str:
        key_id, sealed = self._sealer.seal(plain.encode("utf-8"), purpose=self._purpose)
        body = base64.urlsafe_b64encode(sealed).rstrip(b"=").decode("ascii")
        return f"{_PREFIX}{key_id}.{body}"

    def _open(self, text: str) -> str:
        match = _SEALED.fullmatch(text)
        if match is None:
            return self._plain(text)
        key_id, body = match.groups()
        try:
            sealed = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
        except (binascii.Error, ValueError):
            raise DecryptionError(
                f"a stored {self._purpose} value under key {key_id!r} is damaged"
            ) from None
        plain = self._sealer.open(key_id, sealed, purpose=self._purpose)
        try:
            return plain.decode("utf-8")
        except UnicodeDecodeError:  # pragma: no cover - only what we sealed opens
            raise DecryptionError(f"a stored {self._purpose} value is not text") from None

    def _plain(self, text: str) -> str:
        if text.startswith(_PREFIX):
            raise DecryptionError(f"a stored {self._purpose} value is damaged (malformed)")
        if not self._read_plaintext:
            raise DecryptionError(
                f"a stored {self._purpose} value is not encrypted (written before encryption "
                "was turned on, or by someone else): run 'python -m bot reencrypt'"
            )
        try:
            json.loads(text)
        except ValueError:
            raise DecryptionError(
                f"a stored {self._purpose} value is neither encrypted nor JSON"
            ) from None
        return text
