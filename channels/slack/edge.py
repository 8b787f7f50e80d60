"""Reading a request at the edge, cheapest and safest first: signature, charset, nesting.

Everything here runs before anything parses the body, and none of it raises on outside data:

1. :class:`RequestSignatures` checks the headers' shapes (ASCII, ``v0=`` + 64 hex digits, a
   timestamp of at most 12 digits) and then the HMAC over the raw bytes. slack_sdk's verifier
   raised on such headers (``TypeError`` for a non-ASCII signature, ``ValueError`` or
   ``OverflowError`` for a timestamp of thousands of digits) and on a body that is not UTF-8,
   and Bolt answered those with a 500 without knowing the secret.
2. :func:`decoded` reads the signed bytes in a charset we know (UTF-8, or ASCII); an unknown
   charset made aiohttp raise ``LookupError``.
3. :func:`too_deep` refuses JSON nested deeper than :data:`MAX_DEPTH` before ``json.loads`` can
   recurse (``RecursionError`` at about 1000 levels): a cheap scan of the brackets outside
   strings, over the body or its form ``payload`` field, the two texts Bolt parses as JSON.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable
from datetime import timedelta
from itertools import accumulate
from typing import Final
from urllib.parse import parse_qsl

from slack_sdk.signature import Clock

MAX_DEPTH: Final = 64
"""Slack's payloads nest about ten levels (a view's state values); 64 leaves room to spare."""
MAX_TIMESTAMP_DIGITS: Final = 12
SIGNATURE_TOLERANCE: Final = timedelta(minutes=5)
"""How far a request's timestamp may be from now (Slack's rule, as Bolt applies it)."""

_SIGNATURE: Final = re.compile(r"v0=[0-9a-f]{64}")
_TIMESTAMP: Final = re.compile(rf"[0-9]{{1,{MAX_TIMESTAMP_DIGITS}}}")
_CHARSET: Final = re.compile(r";\s*charset\s*=([^;]*)", re.IGNORECASE)
_CODECS: Final = {"utf-8": "utf-8", "utf8": "utf-8", "us-ascii": "ascii", "ascii": "ascii"}


class RequestSignatures:
    """Slack's request signatures: ``v0=`` + HMAC-SHA256 of ``v0:<timestamp>:<raw body>``.

    ``now`` is slack_sdk's clock, the one Bolt's own check uses (seconds since the epoch).
    """

    def __init__(self, secret: str, *, now: Callable[[], float] | None = None) -> None:
        self._key = secret.encode()
        self._now = now or Clock().now

    def valid(self, raw: bytes, timestamp: str | None, signature: str | None) -> bool:
        """``True`` only for well-formed headers, a fresh timestamp and the right HMAC."""
        if timestamp is None or signature is None or not _well_formed(timestamp, signature):
            return False
        if abs(self._now() - int(timestamp)) > SIGNATURE_TOLERANCE.total_seconds():
            return False
        base = b"v0:" + timestamp.encode() + b":" + raw
        expected = "v0=" + hmac.new(self._key, base, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, signature)


def _well_formed(timestamp: str, signature: str) -> bool:
    # isascii first: str.isdigit and \d take other scripts' digits, int() would read them
    return (
        timestamp.isascii()
        and signature.isascii()
        and _TIMESTAMP.fullmatch(timestamp) is not None
        and _SIGNATURE.fullmatch(signature) is not None
    )


def decoded(raw: bytes, content_type: str | None) -> str | None:
    """The body as text, or ``None`` when its charset is unknown or it does not decode.

    The charset is read from ``content_type`` here rather than by aiohttp, which ignores a
    parameter it cannot parse (``charset=[``): any charset named but unknown is refused.
    """
    match = _CHARSET.search(content_type or "")
    charset = match.group(1).strip().removeprefix('"').removesuffix('"').strip() if match else ""
    codec = _CODECS.get(charset.lower() or "utf-8")
    if codec is None:
        return None
    try:
        return raw.decode(codec)
    except UnicodeDecodeError:
        return None


def too_deep(body: str, *, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON that Bolt would parse from ``body`` (the body itself, or a form's
    ``payload`` field) nests deeper than ``limit``."""
    if _openings(body) <= limit:  # every request Slack sends: nothing to scan or decode
        return False
    if _depth(body) > limit:
        return True
    if "payload" not in body:  # a plain form: Bolt parses no JSON from it
        return False
    return any(_depth(value) > limit for name, value in parse_qsl(body) if name == "payload")


def _openings(body: str) -> int:
    """How many brackets ``body`` opens, as they are or percent-encoded in a form (``%5B``,
    ``%7B``; ``+`` and other escapes decode to no bracket): no JSON in it, nor in its form's
    fields, nests deeper. Counting is far cheaper than decoding a click's form to scan it."""
    upper = body.upper()
    return body.count("[") + body.count("{") + upper.count("%5B") + upper.count("%7B")


# a string, or an unclosed one to the end (possessive: linear on any text, no backtracking)
_STRING: Final = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


def _depth(text: str) -> int:
    """The deepest nesting of brackets outside JSON strings (an unclosed string's count too)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)
