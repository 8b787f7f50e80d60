"""Encryption at rest: payload columns and LangGraph's checkpoints, AES-256-GCM, keys rotate.

- ``keys``: the key ring (``COUNTERSIGN_ENCRYPTION_KEYS``, current key first) and new keys;
- ``key_file`` / ``key_source``: where a database's keys come from (the setting; the key file
  beside a SQLite database, made once; a random key in memory; PostgreSQL requires the setting);
- ``cipher``: AES-256-GCM with a random nonce per value, bound to its purpose;
- ``codec``: the encrypting ``PayloadCodec`` of our store;
- ``checkpoint_serde`` / ``postgres_saver``: the encrypting serde of LangGraph's checkpointers;
- ``reencrypt``: move every stored value to the current key (``python -m bot reencrypt``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.core.lazy_exports import lazy_exports

# imported at once (it is light): the name is also its module's, and a later import of the
# module must not shadow the function
from bot.security.key_source import KeySource, key_source

if TYPE_CHECKING:
    from bot.security.checkpoint_serde import (
        CheckpointResealer,
        RingCipher,
        checkpoint_key_id,
        encrypted_checkpoint_serde,
    )
    from bot.security.codec import EncryptingCodec, payload_key_id
    from bot.security.errors import DecryptionError, ReencryptError, UnknownKeyError
    from bot.security.key_file import key_file_for, load_or_create_key_file, read_key_file
    from bot.security.keys import (
        SETTING,
        EncryptionKey,
        KeyRing,
        generate_key,
        parse_key_ring,
        random_key_ring,
    )
    from bot.security.reencrypt import ReencryptReport, reencrypt_database

__all__ = [
    "SETTING",
    "CheckpointResealer",
    "DecryptionError",
    "EncryptingCodec",
    "EncryptionKey",
    "KeyRing",
    "KeySource",
    "ReencryptError",
    "ReencryptReport",
    "RingCipher",
    "UnknownKeyError",
    "checkpoint_key_id",
    "encrypted_checkpoint_serde",
    "generate_key",
    "key_file_for",
    "key_source",
    "load_or_create_key_file",
    "parse_key_ring",
    "payload_key_id",
    "random_key_ring",
    "read_key_file",
    "reencrypt_database",
]

_EXPORTED_FROM: dict[str, str] = {
    "CheckpointResealer": "bot.security.checkpoint_serde",
    "DecryptionError": "bot.security.errors",
    "EncryptingCodec": "bot.security.codec",
    "EncryptionKey": "bot.security.keys",
    "KeyRing": "bot.security.keys",
    "ReencryptError": "bot.security.errors",
    "ReencryptReport": "bot.security.reencrypt",
    "RingCipher": "bot.security.checkpoint_serde",
    "SETTING": "bot.security.keys",
    "UnknownKeyError": "bot.security.errors",
    "checkpoint_key_id": "bot.security.checkpoint_serde",
    "encrypted_checkpoint_serde": "bot.security.checkpoint_serde",
    "generate_key": "bot.security.keys",
    "key_file_for": "bot.security.key_file",
    "load_or_create_key_file": "bot.security.key_file",
    "parse_key_ring": "bot.security.keys",
    "payload_key_id": "bot.security.codec",
    "random_key_ring": "bot.security.keys",
    "read_key_file": "bot.security.key_file",
    "reencrypt_database": "bot.security.reencrypt",
}
"""Where each public name lives, imported on first use: LangGraph loads only with the
checkpoint serde, so the key settings are read (and a bad one told) before it loads."""


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTED_FROM, __all__)
