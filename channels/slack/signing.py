"""Signed ``private_metadata`` for the reject and edit modals.

A modal's metadata comes back with its submission, through the user's client: it is outside data.
It is signed (HMAC-SHA256 with the signing secret, bound to the modal kind and the user who
opened it) so that a changed pause id, channel or user is refused, never acted on.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Final, Literal

ModalKind = Literal["reject", "edit", "respond", "reassign"]
SealedKind = Literal["reject", "edit", "respond", "reassign", "grant", "batch-reject"]
"""What a sealed metadata may be for: a modal answering a pause, a grant's modal, or the
modal rejecting a batch (its ``pause_id`` is then the batch's ids sealed for the person:
``channels.slack.batch_seal``)."""

_DOMAIN: Final = b"countersign-modal-v1"
MAX_METADATA: Final = 3000
"""Slack's cap on a view's ``private_metadata``: anything longer was not sealed by us."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModalMetadata:
    """What a modal carries: the pause, who opened it, and where to tell them things.

    ``channel`` / ``thread_ts`` are where the click came from (``None`` from the App Home);
    ``response_url`` is set when the click came from an ephemeral ``/pending`` list.
    """

    kind: SealedKind
    pause_id: str
    user: str
    channel: str | None = None
    thread_ts: str | None = None
    response_url: str | None = None
    shown_round: int | None = None
    """Which proposal the modal showed (``channels.slack.button_values``); None: it did not
    say (the question's own proposal)."""

    def __repr__(self) -> str:  # never print the pause id
        return f"ModalMetadata(kind={self.kind!r}, user={self.user!r}, channel={self.channel!r})"


class MetadataSigner:
    """Seals and opens modal metadata with a key derived from the signing secret."""

    def __init__(self, secret: str) -> None:
        self._key = hmac.new(secret.encode(), _DOMAIN, hashlib.sha256).digest()

    def seal(self, metadata: ModalMetadata) -> str:
        document: dict[str, object] = {
            "k": metadata.kind,
            "p": metadata.pause_id,
            "u": metadata.user,
            "c": metadata.channel,
            "t": metadata.thread_ts,
            "r": metadata.response_url,
        }
        if metadata.shown_round is not None:
            document["s"] = metadata.shown_round
        body = _b64(json.dumps(document, separators=(",", ":")).encode())
        return f"{body}.{self._mac(body)}"

    def open(self, sealed: str, *, kind: SealedKind, user: str) -> ModalMetadata | None:
        """The metadata if it is intact, of ``kind`` and opened by ``user``; else ``None``.

        ``sealed`` came back through the user's client: anything but the ASCII we sealed is
        refused before ``hmac.compare_digest``, which raises ``TypeError`` on other text.
        """
        if not sealed.isascii() or len(sealed) > MAX_METADATA:
            return None
        body, dot, mac = sealed.rpartition(".")
        if not dot or not hmac.compare_digest(mac, self._mac(body)):
            return None
        try:
            document = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except (binascii.Error, ValueError):
            return None
        if not isinstance(document, dict) or document.get("k") != kind or document.get("u") != user:
            return None
        pause_id = document.get("p")
        if not isinstance(pause_id, str) or not pause_id:
            return None
        return ModalMetadata(
            kind=kind,
            pause_id=pause_id,
            user=user,
            channel=_text(document.get("c")),
            thread_ts=_text(document.get("t")),
            response_url=_text(document.get("r")),
            shown_round=_round(document.get("s")),
        )

    def _mac(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _round(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
