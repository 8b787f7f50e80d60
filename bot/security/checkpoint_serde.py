"""Encrypting LangGraph's checkpoints and writes (they hold the messages: tool arguments, etc.).

LangGraph's own ``EncryptedSerializer`` does the wrapping (LangGraph knows it: its msgpack
allowlist machinery keeps it when it derives a stricter serializer); ``RingCipher`` is our
``CipherProtocol`` for it. A stored checkpoint value is the pair LangGraph keeps anyway:

- type: ``<serializer type>+v1.<key-id>``, e.g. ``msgpack+v1.k3f9a12bc``;
- bytes: ``nonce || ciphertext || tag`` (AES-256-GCM, bound to the purpose ``checkpoint``).

Values are written with the current key and read with the key their type names. A pair without
``+`` is read as plain (LangGraph's behaviour for checkpoints written before encryption);
``python -m bot reencrypt`` seals those too.
"""

from __future__ import annotations

import re

from langgraph.checkpoint.serde.base import CipherProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from bot.security.cipher import SCHEME, Sealer
from bot.security.errors import DecryptionError
from bot.security.keys import KeyRing

CHECKPOINT_PURPOSE = "checkpoint"
_CIPHER_NAME = re.compile(rf"{re.escape(SCHEME)}\.([A-Za-z0-9_-]{{1,32}})")


class RingCipher(CipherProtocol):
    """AES-256-GCM with the key ring; the cipher name carries the key id (``v1.<key-id>``)."""

    __slots__ = ("_sealer",)

    def __init__(self, sealer: Sealer) -> None:
        self._sealer = sealer

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        key_id, sealed = self._sealer.seal(plaintext, purpose=CHECKPOINT_PURPOSE)
        return f"{SCHEME}.{key_id}", sealed

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        match = _CIPHER_NAME.fullmatch(ciphername)
        if match is None:
            raise DecryptionError("a stored checkpoint names an unknown cipher")
        return self._sealer.open(match.group(1), ciphertext, purpose=CHECKPOINT_PURPOSE)


def encrypted_checkpoint_serde(ring: KeyRing) -> EncryptedSerializer:
    """The serde to give every checkpointer (SQLite, in memory, PostgreSQL)."""
    return EncryptedSerializer(RingCipher(Sealer(ring)), JsonPlusSerializer())


def checkpoint_key_id(type_tag: str) -> str | None:
    """The key id a stored checkpoint value's type names, or None if it is not sealed."""
    _, plus, ciphername = type_tag.partition("+")
    match = _CIPHER_NAME.fullmatch(ciphername) if plus else None
    return match.group(1) if match else None


class CheckpointResealer:
    """Moves stored checkpoint values (type, bytes) to the current key without decoding them."""

    __slots__ = ("_cipher", "_sealer")

    def __init__(self, ring: KeyRing) -> None:
        self._sealer = Sealer(ring)
        self._cipher = RingCipher(self._sealer)

    def reseal(self, type_tag: str, blob: bytes) -> tuple[str, bytes] | None:
        """The pair sealed with the current key, or None if it already is."""
        inner_type, plus, ciphername = type_tag.partition("+")
        if not plus:
            plain = blob  # written before encryption was turned on
        else:
            plain = self._cipher.decrypt(ciphername, blob)
            if checkpoint_key_id(type_tag) == self._sealer.current_key_id:
                return None
        name, sealed = self._cipher.encrypt(plain)
        return f"{inner_type}+{name}", sealed
