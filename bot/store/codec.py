"""How payloads (asks, answers, decisions, outputs) are written to a text column.

``JsonCodec`` writes plain JSON. Encryption at rest plugs in here: a codec that wraps the JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol


class PayloadCodec(Protocol):
    def encode(self, value: Any) -> str: ...

    def decode(self, text: str) -> Any: ...


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)
"""Built once: ``json.dumps`` with any argument but its defaults builds an encoder per call."""


_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
"""The C scanner ``json.loads`` ends in: called directly, without ``loads``' three Python
frames and two whitespace matches (half of reading a stored question)."""


class JsonCodec:
    def encode(self, value: Any) -> str:
        return _ENCODER.encode(value)

    def decode(self, text: str) -> Any:
        """``json.loads(text)``: a text that is one JSON value and nothing else (what
        ``encode`` writes) is read by the scanner alone; any other goes through ``loads``,
        which reads surrounding whitespace or raises as it always did."""
        try:
            value, end = _SCAN(text, 0)
        except StopIteration:  # not a value where it starts (whitespace, nothing, junk)
            return json.loads(text)
        return value if end == len(text) else json.loads(text)
