"""What goes wrong reading an encrypted value. Messages name key ids, never a key or a value."""

from __future__ import annotations

from bot.core.errors import StorageError


class UnknownKeyError(StorageError):
    """A stored value names a key id the key ring does not hold."""

    code = "crypto.unknown-key"

    def __init__(self, key_id: str) -> None:
        self.key_id = key_id
        super().__init__(
            f"a stored value is encrypted under key id {key_id!r}, which is not among the keys "
            "configured: put that key back in COUNTERSIGN_ENCRYPTION_KEYS (after the current "
            "key), then run 'python -m bot reencrypt'"
        )


class DecryptionError(StorageError):
    """A stored value is damaged, was tampered with, or was moved from another column."""

    code = "crypto.undecryptable"


class ReencryptError(StorageError):
    """Re-encryption stopped at a value it cannot read; what was moved before stays moved."""

    code = "crypto.reencrypt-stopped"
