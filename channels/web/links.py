"""Signed, expiring links: who holds one answers one question (or opens an inbox) as one person.

A link's token is sealed, then signed (encrypt-then-MAC), each with its own key derived from
the App's encryption key ring (``App.derived_keys``, HKDF), so every instance reads the links of
every other and a key rotation keeps old links working until the old key leaves the ring::

    <key id> "." base64url(nonce || AES-256-GCM(kind, pause id, approver, tenant, expiry))
             "." base64url(HMAC-SHA256 over everything before it)

Each part has one spelling (unpadded base64url, unused bits zero): any other is malformed.
The pause id is inside the sealed part: never readable in a URL, a page or a log. The HMAC is
checked first, in constant time, so a forged or tampered token costs no decryption; the kind is
bound in as associated data, so a session cookie never opens a question, nor an inbox link.
Nothing is stored: the token is the whole reference.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bot.core.clock import Clock
from bot.security.derived import DerivedKeys

SEAL_PURPOSE: Final = "web-link/seal/v1"
MAC_PURPOSE: Final = "web-link/mac/v1"
_NONCE: Final = 12
_MAX_TOKEN: Final = 2048


class LinkKind(enum.Enum):
    QUESTION = "question"  # opens one question, answers it as the approver
    INBOX = "inbox"  # signs the approver in to their inbox
    SESSION = "session"  # the cookie an opened link leaves


class LinkProblem(enum.Enum):
    MALFORMED = "malformed"
    FORGED = "forged"  # a signature that does not match, or a key the ring does not hold
    EXPIRED = "expired"


class LinkError(Exception):
    """A token that opens nothing; ``problem`` says why (for the log, never the person)."""

    def __init__(self, problem: LinkProblem) -> None:
        super().__init__(problem.value)
        self.problem = problem


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """What a token grants: ``approver`` of ``tenant_id`` may (for a question) answer
    ``pause_id`` until ``expires_at``."""

    kind: LinkKind
    approver: str
    tenant_id: str
    expires_at: datetime
    pause_id: str = ""

    def __repr__(self) -> str:  # never print the pause id
        return (
            f"Link(kind={self.kind.value}, approver={self.approver!r}, tenant={self.tenant_id!r})"
        )


class LinkSigner:
    """Makes and opens tokens with the App's derived keys, on its clock."""

    def __init__(self, keys: DerivedKeys, clock: Clock) -> None:
        self._keys = keys
        self._clock = clock

    def token(
        self,
        kind: LinkKind,
        *,
        approver: str,
        tenant_id: str,
        valid_for: timedelta,
        pause_id: str = "",
    ) -> str:
        expires = int((self._clock.now() + valid_for).timestamp())
        body = json.dumps(
            {"p": pause_id, "a": approver, "t": tenant_id, "e": expires},
            separators=(",", ":"),
        ).encode()
        key_id, seal_key = self._keys.current(SEAL_PURPOSE)
        nonce = os.urandom(_NONCE)
        sealed = nonce + AESGCM(seal_key).encrypt(nonce, body, _aad(kind))
        signed = f"{key_id}.{_b64(sealed)}"
        return f"{signed}.{_b64(_mac(self._mac_key(key_id), kind, signed))}"

    def open(self, kind: LinkKind, token: str) -> Link:
        """What ``token`` grants; ``LinkError`` when it is malformed, forged or expired."""
        parts = token.split(".") if len(token) <= _MAX_TOKEN else []
        if len(parts) != 3:
            raise LinkError(LinkProblem.MALFORMED)
        key_id, sealed_text, mac_text = parts
        mac_key = self._mac_key(key_id)
        seal_key = self._keys.of(key_id, SEAL_PURPOSE)
        if mac_key is None or seal_key is None:
            raise LinkError(LinkProblem.FORGED)
        given = _unb64(mac_text)
        if not hmac.compare_digest(given, _mac(mac_key, kind, f"{key_id}.{sealed_text}")):
            raise LinkError(LinkProblem.FORGED)
        sealed = _unb64(sealed_text)
        try:
            body = AESGCM(seal_key).decrypt(sealed[:_NONCE], sealed[_NONCE:], _aad(kind))
            fields = json.loads(body)
            link = Link(
                kind=kind,
                pause_id=str(fields["p"]),
                approver=str(fields["a"]),
                tenant_id=str(fields["t"]),
                expires_at=datetime.fromtimestamp(int(fields["e"]), UTC),
            )
        except (InvalidTag, ValueError, KeyError, TypeError):
            raise LinkError(LinkProblem.FORGED) from None
        if self._clock.now() >= link.expires_at:
            raise LinkError(LinkProblem.EXPIRED)
        return link

    def _mac_key(self, key_id: str) -> bytes | None:
        return self._keys.of(key_id, MAC_PURPOSE)


def _aad(kind: LinkKind) -> bytes:
    return f"countersign/web-link/{kind.value}".encode()


def _mac(key: bytes | None, kind: LinkKind, signed: str) -> bytes:
    assert key is not None
    return hmac.new(key, f"{kind.value}|{signed}".encode(), hashlib.sha256).digest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    """The bytes ``text`` spells, if it spells them as ``_b64`` does: the decoder alone also
    took padding, ``+`` and ``/``, characters outside the alphabet (skipped) and a last
    character with its unused bits set, so one token had many texts and a link refused by its
    exact text could be opened by another."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise LinkError(LinkProblem.MALFORMED) from None
    if _b64(raw) != text:
        raise LinkError(LinkProblem.MALFORMED)
    return raw
