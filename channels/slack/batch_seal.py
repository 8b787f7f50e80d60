"""The value of a batch's button or checkbox: which pause ids the surface showed, sealed.

A value comes back through the user's client and is seen by it: the pause ids are encrypted
(AES-GCM with a key the App derives for this purpose), bound to the user the list was shown to
and their tenant, so that no pause id is in clear and a value changed, forged or clicked by
someone else opens nothing. A message in a conversation is seen by every member: its values
are sealed for ``ANYONE`` of the tenant (``user=None``), as its own buttons are for anyone who
clicks; who may answer each question is then checked per question, as for a click.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Sequence
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bot.security.derived import DerivedKeys
from channels.slack.render import MAX_BUTTON_VALUE

PURPOSE: Final = "slack-batch/v1"
_NONCE: Final = 12


class BatchSealer:
    def __init__(self, keys: DerivedKeys) -> None:
        self._keys = keys

    def seal(self, pause_ids: Sequence[str], *, user: str | None, tenant_id: str) -> str:
        """``pause_ids`` sealed for ``user`` of ``tenant_id`` (``None``: anyone of it, for a
        message every member of a conversation sees)."""
        key_id, key = self._keys.current(PURPOSE)
        nonce = os.urandom(_NONCE)
        body = json.dumps(list(pause_ids), separators=(",", ":")).encode()
        sealed = nonce + AESGCM(key).encrypt(nonce, body, _aad(user, tenant_id))
        return f"{key_id}.{base64.urlsafe_b64encode(sealed).decode().rstrip('=')}"

    def open(self, value: str, *, user: str, tenant_id: str) -> list[str] | None:
        """The pause ids sealed for ``user`` (or anyone) of ``tenant_id``; ``None`` for
        anything else."""
        if not value.isascii() or len(value) > MAX_BUTTON_VALUE:
            return None
        key_id, dot, text = value.partition(".")
        key = self._keys.of(key_id, PURPOSE) if dot else None
        if key is None:
            return None
        try:
            sealed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            return None
        for bound_to in (user, None):  # the person's own, else one for anyone of the tenant
            ids = _opened(key, sealed, _aad(bound_to, tenant_id))
            if ids is not None:
                return ids
        return None


def _opened(key: bytes, sealed: bytes, aad: bytes) -> list[str] | None:
    try:
        ids = json.loads(AESGCM(key).decrypt(sealed[:_NONCE], sealed[_NONCE:], aad))
    except (ValueError, InvalidTag):
        return None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return None
    return ids


def _aad(user: str | None, tenant_id: str) -> bytes:
    """What a value is bound to: a user (a string), or anyone of the tenant (null)."""
    return json.dumps([PURPOSE, user, tenant_id]).encode()
