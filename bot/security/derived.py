"""Keys for other purposes than encryption at rest, derived from the key ring (HKDF-SHA256).

A channel that signs something (the web channel's links) needs a secret key of the
application that every instance shares and that rotates with the encryption keys, without a
setting of its own: each purpose gets its own key, derived from one ring key, and carries that
key's id so that what was signed before a rotation can be checked until the old key leaves
the ring. A derived key reveals nothing of the ring key (HKDF is one-way).
"""

from __future__ import annotations

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from bot.security.keys import KeyRing

DERIVED_BYTES = 32


class DerivedKeys:
    """Per-purpose keys derived from a key ring: ``current(purpose)`` signs, ``of`` checks."""

    __slots__ = ("_ring",)

    def __init__(self, ring: KeyRing) -> None:
        self._ring = ring

    def current(self, purpose: str) -> tuple[str, bytes]:
        """``(key id, key)`` for ``purpose`` from the ring's current key."""
        key = self._ring.current
        return key.key_id, _derive(key.secret, purpose)

    def of(self, key_id: str, purpose: str) -> bytes | None:
        """The key for ``purpose`` derived from the ring key ``key_id``; ``None`` if the ring
        no longer holds (or never held) that key."""
        if key_id not in self._ring.key_ids:
            return None
        return _derive(self._ring.key(key_id).secret, purpose)

    def __repr__(self) -> str:
        return f"DerivedKeys(key_ids={self._ring.key_ids!r})"


def _derive(secret: bytes, purpose: str) -> bytes:
    hkdf = HKDF(
        algorithm=hashes.SHA256(),
        length=DERIVED_BYTES,
        salt=None,
        info=f"countersign/derived/{purpose}".encode(),
    )
    return hkdf.derive(secret)
