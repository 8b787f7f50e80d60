"""The encrypting payload codec and the checkpoint serde: round trips, tampering, wrong keys."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from bot.security import (
    CheckpointResealer,
    DecryptionError,
    EncryptingCodec,
    KeyRing,
    UnknownKeyError,
    checkpoint_key_id,
    encrypted_checkpoint_serde,
    generate_key,
    payload_key_id,
)
from bot.security.cipher import Sealer
from bot.security.codec import OPENED_MAX_CHARS

A, B = generate_key("key-a"), generate_key("key-b")
RING_A = KeyRing([A])
SECRET_TEXTS = [base64.b64encode(k.secret).decode() for k in (A, B)]

VALUES: list[Any] = [
    {"tool": "refund-card-tool", "arguments": {"order_id": "ORD-1", "amount": 4242.17}},
    {"decision": {"approved": False, "reason": "nein — ünïcödé 👎"}, "responder": "U1"},
    ["a", 1, 2.5, None, True],
    "a tool's result",
    42,
    None,
]


def _no_key_in(message: str) -> None:
    for secret in SECRET_TEXTS:
        assert secret not in message


def _flip(text: str, index: int) -> str:
    """``text`` with the sealed byte at ``index`` flipped (re-encoded, so it stays base64)."""
    prefix, key_id, body = text.split(".", 2)
    raw = bytearray(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    raw[index] ^= 0x01
    return f"{prefix}.{key_id}.{base64.urlsafe_b64encode(bytes(raw)).rstrip(b'=').decode()}"


# ------------------------------------------------------------------------------ payloads


@pytest.mark.parametrize("value", VALUES)
def test_a_value_round_trips(value: Any) -> None:
    codec = EncryptingCodec(RING_A)

    assert codec.decode(codec.encode(value)) == value


def test_a_stored_value_names_its_key_and_hides_the_value() -> None:
    codec = EncryptingCodec(RING_A)

    text = codec.encode({"order_id": "ORD-7Q9X-PLAINTEXT"})

    assert text.startswith("v1.key-a.")
    assert payload_key_id(text) == "key-a"
    assert "ORD-7Q9X" not in text
    assert codec.encode("same") != codec.encode("same")  # a fresh nonce each time


@pytest.mark.parametrize("index", [0, 11, 12, 20, -1])  # nonce, first ciphertext byte, tag
def test_a_flipped_byte_is_a_clear_error(index: int) -> None:
    codec = EncryptingCodec(RING_A)
    text = codec.encode({"approved": True})

    with pytest.raises(DecryptionError) as caught:
        codec.decode(_flip(text, index))

    assert "key 'key-a'" in str(caught.value)
    assert "integrity" in str(caught.value)
    _no_key_in(str(caught.value))


@pytest.mark.parametrize(
    "damage",
    [
        lambda t: t[:-10],  # truncated: still base64, too short to be whole
        lambda t: t[:12],  # shorter than a nonce and a tag
        lambda t: t + "!",  # not base64url
        lambda t: t.replace("v1.", "v1..", 1),  # malformed
        lambda t: "v2" + t[2:],  # an unknown scheme
    ],
)
def test_a_damaged_value_is_a_clear_error(damage: Any) -> None:
    codec = EncryptingCodec(RING_A)

    with pytest.raises(DecryptionError):
        codec.decode(damage(codec.encode({"approved": True})))


def test_an_unknown_key_id_is_named() -> None:
    text = EncryptingCodec(RING_A).encode({"approved": True})

    with pytest.raises(UnknownKeyError) as caught:
        EncryptingCodec(KeyRing([B])).decode(text)

    assert caught.value.key_id == "key-a"
    assert caught.value.code == "crypto.unknown-key"
    assert "'key-a'" in str(caught.value)
    assert "COUNTERSIGN_ENCRYPTION_KEYS" in str(caught.value)
    _no_key_in(str(caught.value))


def test_a_wrong_key_under_the_right_id_fails_the_integrity_check() -> None:
    text = EncryptingCodec(RING_A).encode({"approved": True})
    impostor = KeyRing([generate_key("key-a")])

    with pytest.raises(DecryptionError, match="integrity"):
        EncryptingCodec(impostor).decode(text)


def test_a_value_is_bound_to_its_purpose() -> None:
    """A checkpoint's ciphertext (or another purpose's) cannot pose as a payload."""
    key_id, sealed = Sealer(RING_A).seal(b'{"approved":true}', purpose="checkpoint")
    posing = f"v1.{key_id}.{base64.urlsafe_b64encode(sealed).rstrip(b'=').decode()}"

    with pytest.raises(DecryptionError, match="integrity"):
        EncryptingCodec(RING_A).decode(posing)
    assert EncryptingCodec(RING_A, purpose="checkpoint").decode(posing) == {"approved": True}


def test_plain_json_is_refused_unless_asked_for() -> None:
    plain = json.dumps({"approved": True})

    with pytest.raises(DecryptionError, match=r"not encrypted.*python -m bot reencrypt"):
        EncryptingCodec(RING_A).decode(plain)
    assert EncryptingCodec(RING_A, read_plaintext=True).decode(plain) == {"approved": True}
    with pytest.raises(DecryptionError, match="neither encrypted nor JSON"):
        EncryptingCodec(RING_A, read_plaintext=True).decode("approved!")


def test_values_are_written_with_the_current_key_and_read_with_theirs() -> None:
    old = EncryptingCodec(RING_A).encode({"n": 1})
    rotated = EncryptingCodec(KeyRing([B, A]))

    assert rotated.decode(old) == {"n": 1}
    assert payload_key_id(rotated.encode({"n": 2})) == "key-b"


def test_reseal_moves_a_value_to_the_current_key_once() -> None:
    rotated = EncryptingCodec(KeyRing([B, A]), read_plaintext=True)
    old = EncryptingCodec(RING_A).encode({"n": 1})

    moved = rotated.reseal(old)

    assert moved is not None and payload_key_id(moved) == "key-b"
    assert EncryptingCodec(KeyRing([B])).decode(moved) == {"n": 1}
    assert rotated.reseal(moved) is None
    plain = rotated.reseal('{"n": 3}')
    assert plain is not None and rotated.decode(plain) == {"n": 3}
    with pytest.raises(DecryptionError):
        rotated.reseal(_flip(moved, 15))  # a damaged current value is reported, not kept


def test_a_value_read_again_is_opened_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same stored text decodes from what it opened the first time (a fresh, equal value
    each time); a long one, a damaged one, are opened (and refused) each time they are read."""
    opened: list[str] = []
    real_open = Sealer.open

    def counting_open(self: Sealer, key_id: str, sealed: bytes, *, purpose: str) -> bytes:
        opened.append(key_id)
        return real_open(self, key_id, sealed, purpose=purpose)

    monkeypatch.setattr(Sealer, "open", counting_open)
    codec = EncryptingCodec(RING_A)
    text = codec.encode(VALUES[0])
    first, again = codec.decode(text), codec.decode(text)

    assert first == again == VALUES[0] and first is not again
    assert len(opened) == 1
    long = codec.encode("x" * OPENED_MAX_CHARS)
    assert codec.decode(long) == codec.decode(long) == "x" * OPENED_MAX_CHARS
    assert len(opened) == 3
    for _ in range(2):
        with pytest.raises(DecryptionError, match="fails its integrity check"):
            codec.decode(_flip(text, 20))
    assert len(opened) == 5


def test_a_key_is_never_in_a_repr() -> None:
    assert SECRET_TEXTS[0] not in repr(A)
    assert repr(KeyRing([A, B])) == "KeyRing(key_ids=['key-a', 'key-b'])"


# ------------------------------------------------------------------------------ checkpoints

MESSAGES = [
    HumanMessage(content="refund ORD-7Q9X-PLAINTEXT"),
    AIMessage(
        content="",
        tool_calls=[
            {"name": "refund", "args": {"amount": 4242.17}, "id": "c1", "type": "tool_call"}
        ],
    ),
    ToolMessage(content="refunded", tool_call_id="c1"),
]


@pytest.mark.parametrize("value", [MESSAGES, {"text": "ORD-7Q9X-PLAINTEXT"}, "plain", None, b"x"])
def test_the_checkpoint_serde_round_trips(value: Any) -> None:
    serde = encrypted_checkpoint_serde(RING_A)

    type_tag, data = serde.dumps_typed(value)

    assert checkpoint_key_id(type_tag) == "key-a"
    assert b"ORD-7Q9X" not in data
    assert serde.loads_typed((type_tag, data)) == value


def test_a_tampered_checkpoint_is_a_clear_error() -> None:
    serde = encrypted_checkpoint_serde(RING_A)
    type_tag, data = serde.dumps_typed(MESSAGES)
    flipped = bytes([data[0], data[1] ^ 1, *data[2:]])

    with pytest.raises(DecryptionError, match="checkpoint value under key 'key-a'"):
        serde.loads_typed((type_tag, flipped))
    with pytest.raises(UnknownKeyError, match="key-a"):
        encrypted_checkpoint_serde(KeyRing([B])).loads_typed((type_tag, data))
    with pytest.raises(DecryptionError, match="unknown cipher"):
        serde.loads_typed(("msgpack+aes", data))


def test_a_checkpoint_is_resealed_under_the_current_key() -> None:
    type_tag, data = encrypted_checkpoint_serde(RING_A).dumps_typed(MESSAGES)
    resealer = CheckpointResealer(KeyRing([B, A]))

    moved = resealer.reseal(type_tag, data)

    assert moved is not None and checkpoint_key_id(moved[0]) == "key-b"
    assert encrypted_checkpoint_serde(KeyRing([B])).loads_typed(moved) == MESSAGES
    assert resealer.reseal(*moved) is None
    plain_type, plain = encrypted_checkpoint_serde(RING_A).serde.dumps_typed(MESSAGES)
    sealed = resealer.reseal(plain_type, plain)
    assert sealed is not None and checkpoint_key_id(sealed[0]) == "key-b"
