"""How payloads (asks, answers, decisions, outputs) are written to a text column.

``JsonCodec`` writes plain JSON. Encryption at rest plugs in here: a codec that wraps the JSON.
"""

from __future__ import annotations

import json
from typing import Any, Protocol


class PayloadCodec(Protocol):
    def encode(self, value: Any) -> str: ...

    def decode(self, text: str) -> Any: ...


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)
"""Built once: ``json.dumps`` with any argument but its defaults builds an encoder per call."""


class JsonCodec:
    def encode(self, value: Any) -> str:
        return _ENCODER.encode(value)

    def decode(self, text: str) -> Any:
        return json.loads(text)
