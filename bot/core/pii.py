"""PII policies for what a model reads: detectors, actions, and the policies that pair them.

``@application(pii_policies=[...])`` and ``@workflow(pii_policies=[...])`` apply — the
application's first, then the workflow's — to the question and the reply a model reply
interpreter reads:

* ``replace_with_token()``: each value found reaches the model as a stable token (``<EMAIL_1>``;
  the same value is the same token within one reading). Tokens in the model's answer are
  revealed before the answer is validated, so the tool gets the real value; a token the reading
  never gave out is a decline (the reply is unreadable, the pause stays pending).
* ``block_with_refusal()``: a value found stops the reading before any model call
  (``PiiRefusedError``; the pause is untouched).
* ``allow_unmasked()``: only meaningful with ``SensitiveFields()``, see below.

Sensitive fields of the tool's input (``bot.Sensitive``) never reach a model unmasked by
default: the model reads a mask instead. A policy on ``SensitiveFields()`` changes that:
``replace_with_token()`` gives the model a token it can carry into ``override_arguments``,
``allow_unmasked()`` the real value, ``block_with_refusal()`` refuses to read such a question.

Shipped detectors: ``EmailDetector``, ``PhoneDetector``, ``CardNumberDetector`` (Luhn-checked).
A detector of your own implements ``PiiDetector``: a ``label`` and ``find(text)``.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True, kw_only=True)
class PiiMatch:
    """Where a detector found a value in a text: ``text[start:end]``."""

    start: int
    end: int


@runtime_checkable
class PiiDetector(Protocol):
    """Finds values of one kind in a text. ``label`` names the tokens: ``<LABEL_1>``."""

    @property
    def label(self) -> str: ...

    def find(self, text: str) -> list[PiiMatch]: ...


class PiiAction(enum.Enum):
    REPLACE_WITH_TOKEN = "replace-with-token"
    BLOCK_WITH_REFUSAL = "block-with-refusal"
    ALLOW_UNMASKED = "allow-unmasked"


def replace_with_token() -> PiiAction:
    """The model reads a token instead of the value; its answer's tokens are revealed."""
    return PiiAction.REPLACE_WITH_TOKEN


def block_with_refusal() -> PiiAction:
    """A value found refuses the reading: ``PiiRefusedError``, the model is never called."""
    return PiiAction.BLOCK_WITH_REFUSAL


def allow_unmasked() -> PiiAction:
    """With ``SensitiveFields()``: the model reads sensitive fields as they are."""
    return PiiAction.ALLOW_UNMASKED


@dataclass(frozen=True, slots=True)
class SensitiveFields:
    """Stands for the tool input's fields marked ``Sensitive`` (masked unless a policy says)."""

    label: str = "SENSITIVE"


@dataclass(frozen=True, slots=True, kw_only=True)
class PiiPolicy:
    """What to do (``action``) with the values a ``detector`` finds in what a model reads."""

    detector: PiiDetector | SensitiveFields
    action: PiiAction

    def __post_init__(self) -> None:
        if not isinstance(self.action, PiiAction):
            raise TypeError(
                "action must be replace_with_token(), block_with_refusal() or allow_unmasked()"
            )
        if not isinstance(self.detector, SensitiveFields | PiiDetector):
            raise TypeError("detector must be a PiiDetector (label and find) or SensitiveFields()")
        if not _LABEL.fullmatch(self.detector.label):
            raise ValueError("a detector's label is upper-case letters and '_', e.g. 'EMAIL'")


_LABEL = re.compile(r"[A-Z][A-Z_]*")


# --------------------------------------------------------------------------------------------
# The shipped detectors.


class RegexDetector:
    """Every match of ``pattern`` that ``accept`` (override it to check more) accepts."""

    __slots__ = ("_label", "_pattern")

    def __init__(self, label: str, pattern: str | re.Pattern[str]) -> None:
        self._label = label
        self._pattern = re.compile(pattern)

    @property
    def label(self) -> str:
        return self._label

    def find(self, text: str) -> list[PiiMatch]:
        return [
            PiiMatch(start=m.start(), end=m.end())
            for m in self._pattern.finditer(text)
            if self.accept(m.group())
        ]

    def accept(self, value: str) -> bool:
        return True

    def __repr__(self) -> str:
        return f"{type(self).__name__}(label={self._label!r})"


_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,5}(?![\w])"
)
_CARD = re.compile(r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)")


def _digits(value: str) -> str:
    return "".join(ch for ch in value if ch.isdigit())


def luhn_valid(number: str) -> bool:
    """The Luhn checksum of a string of digits (card numbers carry one)."""
    total = 0
    for position, digit in enumerate(reversed(number)):
        value = int(digit)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return bool(number) and total % 10 == 0


class EmailDetector(RegexDetector):
    """E-mail addresses (``name@example.com``)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("EMAIL", _EMAIL)


class PhoneDetector(RegexDetector):
    """Phone numbers: ``+`` and 7-15 digits, 9-15 in groups or 10-15 in a row (not dates)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("PHONE", _PHONE)

    def accept(self, value: str) -> bool:
        count = len(_digits(value))
        if value.startswith("+"):
            return 7 <= count <= 15
        grouped = any(not ch.isdigit() for ch in value)
        return (9 if grouped else 10) <= count <= 15


class CardNumberDetector(RegexDetector):
    """Payment card numbers: 13-19 digits (spaces or dashes allowed) with a valid Luhn sum."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("CARD_NUMBER", _CARD)

    def accept(self, value: str) -> bool:
        return luhn_valid(_digits(value))
