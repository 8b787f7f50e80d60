"""Sealing bytes with AES-256-GCM under a key ring: the one cipher both stores use.

Why AES-GCM and not Fernet: GCM is an AEAD that takes *associated data*, so each ciphertext is
bound to its purpose (a payload column, a LangGraph checkpoint) and cannot be moved to another
one unnoticed; Fernet has no associated data. GCM also uses a 256-bit key (Fernet: AES-128-CBC
plus HMAC), adds 28 bytes per value (Fernet: 57 before base64), and stores no timestamp (Fernet
leaks when each value was written).

Each value gets a fresh random 96-bit nonce from the OS. Random nonces under one key are safe
for well beyond 2**32 values at the standard 2**-32 collision bound, far more than a
Countersign deployment writes before its key is rotated. The sealed form is
``nonce (12 bytes) || ciphertext || tag (16 bytes)``; the key id travels beside it (see
``bot.security.codec`` and ``bot.security.checkpoint_serde`` for how each store writes it).
"""

from __future__ import annotations

import functools
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bot.security.errors import DecryptionError
from bot.security.keys import KeyRing

SCHEME = "v1"
"""Names the whole recipe (AES-256-GCM, 96-bit random nonce, the associated data below)."""
NONCE_BYTES = 12
TAG_BYTES = 16


class Sealer:
    """Seals with the ring's current key, opens with whichever key a value names."""

    __slots__ = ("_aeads", "_current", "_ring")

    def __init__(self, ring: KeyRing) -> None:
        self._ring = ring
        self._aeads = {key.key_id: AESGCM(key.secret) for key in ring.keys}
        current = ring.current.key_id  # a ring never changes: looked up once, not per value
        self._current = (current, self._aeads[current])

    @property
    def ring(self) -> KeyRing:
        return self._ring

    @property
    def current_key_id(self) -> str:
        return self._ring.current.key_id

    def seal(self, plaintext: bytes, *, purpose: str) -> tuple[str, bytes]:
        """``(key id, nonce || ciphertext || tag)`` of ``plaintext`` bound to ``purpose``."""
        key_id, aead = self._current
        nonce = os.urandom(NONCE_BYTES)
        return key_id, nonce + aead.encrypt(nonce, plaintext, _aad(purpose))

    def open(self, key_id: str, sealed: bytes, *, purpose: str) -> bytes:
        """The plaintext; ``UnknownKeyError`` or ``DecryptionError`` (naming the key id only)."""
        self._ring.key(key_id)  # raises UnknownKeyError naming the id
        if len(sealed) < NONCE_BYTES + TAG_BYTES:
            raise DecryptionError(f"a stored {purpose} value under key {key_id!r} is truncated")
        nonce, body = sealed[:NONCE_BYTES], sealed[NONCE_BYTES:]
        try:
            return self._aeads[key_id].decrypt(nonce, body, _aad(purpose))
        except InvalidTag:
            raise DecryptionError(
                f"a stored {purpose} value under key {key_id!r} fails its integrity check: "
                "it was altered, damaged, or copied from elsewhere"
            ) from None


@functools.cache
def _aad(purpose: str) -> bytes:
    """The associated data binding a value to its purpose (a handful of purposes: kept)."""
    return f"countersign/{SCHEME}/{purpose}".encode()
