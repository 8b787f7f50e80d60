"""``JsonCodec`` reads a stored text exactly as ``json.loads`` does, value or error."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.store.codec import JsonCodec

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
AROUND = st.sampled_from(["", " ", "\n", "\t ", ",", "x", "]", "}", "0", '"', "\ufeff"])


def _read(read: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", read(text)
    except ValueError as error:
        return type(error).__name__, str(error)


@settings(max_examples=400, deadline=None)
@given(VALUES, AROUND, AROUND)
def test_a_text_reads_as_json_loads_reads_it(value: Any, before: str, after: str) -> None:
    codec = JsonCodec()
    written = codec.encode(value)
    assert codec.decode(written) == json.loads(written)
    text = before + written + after
    assert _read(codec.decode, text) == _read(json.loads, text)


@given(st.text(max_size=12))
def test_any_text_reads_or_fails_as_json_loads(text: str) -> None:
    assert _read(JsonCodec().decode, text) == _read(json.loads, text)
