"""Encryption at rest: payload columns and LangGraph's checkpoints, AES-256-GCM, keys rotate.

- ``keys``: the key ring (``COUNTERSIGN_ENCRYPTION_KEYS``, current key first) and new keys;
- ``key_file`` / ``key_source``: where a database's keys come from (the setting; the key file
  beside a SQLite database, made once; a random key in memory; PostgreSQL requires the setting);
- ``cipher``: AES-256-GCM with a random nonce per value, bound to its purpose;
- ``codec``: the encrypting ``PayloadCodec`` of our store;
- ``checkpoint_serde`` / ``postgres_saver``: the encrypting serde of LangGraph's checkpointers;
- ``reencrypt``: move every stored value to the current key (``python -m bot reencrypt``).
"""

from bot.security.checkpoint_serde import (
    CheckpointResealer,
    RingCipher,
    checkpoint_key_id,
    encrypted_checkpoint_serde,
)
from bot.security.codec import EncryptingCodec, payload_key_id
from bot.security.errors import DecryptionError, ReencryptError, UnknownKeyError
from bot.security.key_file import key_file_for, load_or_create_key_file, read_key_file
from bot.security.key_source import KeySource, key_source
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
