"""How a question's arguments read, in every channel: field titles and values written for a
person (Slack, the web page and inbox, the terminal show the same text).

Titles: a field's ``Field(title=...)`` when it has one, else its name humanized
(``order_id`` → "Order ID", ``customerEmail`` → "Customer email"; common acronyms stay
upper-case).

Values (sensitive ones are masked before they get here and stay as masked):

* ``None`` → "—", an empty string → "(empty)", booleans → "Yes" / "No";
* integers get thousands separators (``1234567`` → "1,234,567"), except in identifier-like
  fields (see :data:`_PLAIN_WORDS`: ``order_id``, ``year``, ``zip_code``...), shown as is;
* money gets thousands separators and at least two decimals (``120.0`` → "120.00",
  ``Decimal("1234.5")`` → "1,234.50"). It is never rounded: ``0.125`` stays "0.125", since an
  approver must see what will run. Which fields hold money: see :func:`is_money`;
* other floats and decimals get thousands separators and their own digits (``2.5``);
* enums show their value; lists of plain values are joined with ", "; anything else is
  compact JSON.
"""

from __future__ import annotations

import json
import re
import types
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Annotated, Any, Final, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

NONE_SHOWN: Final = "—"
EMPTY_SHOWN: Final = "(empty)"

MONEY_FLAG: Final = "money"
"""``Field(json_schema_extra={"money": True})`` marks a money field (``False`` unmarks one)."""

_MONEY_WORD: Final = re.compile(r"(?:sub)?(?:amount|price|cost|total|fee|refund)s?")
_ACRONYMS: Final = {
    word: word.upper()
    for word in (
        *("id", "api", "bic", "cc", "csv", "eta", "faq", "gst", "html", "http", "https", "iban"),
        *("ip", "json", "pdf", "pin", "sku", "sms", "ssn", "uri", "url", "utc", "uuid", "vat"),
        *("usd", "eur", "gbp", "chf", "jpy"),
    )
} | {"ids": "IDs", "urls": "URLs", "uuids": "UUIDs", "skus": "SKUs"}
_PLAIN_WORDS: Final = frozenset(
    {
        *("id", "ids", "uuid", "number", "num", "no", "code", "year", "zip", "postcode", "pin"),
        *("phone", "account", "iban", "sku", "ref", "reference"),
    }
)
"""A field whose name has one of these words holds an identifier: its integers keep no
separators (``order_id`` 1234567, ``year`` 2026)."""

_WORDS: Final = re.compile(
    r"[A-Z]{2,}s(?![a-z])"  # a plural acronym: URLs, IDs
    r"|[A-Z]+(?=[A-Z][a-z]|\d|\b|_)"  # an acronym before a word: HTTPServer
    r"|[A-Z]?[a-z]+|[A-Z]+|\d+"
)


# --------------------------------------------------------------------------------------------
# Titles.


def words_of(name: str) -> list[str]:
    """The words of an identifier, lower-case: ``orderID`` and ``order-id`` → order, id."""
    return [word.lower() for word in _WORDS.findall(name)]


def humanize(name: str) -> str:
    """A field name as a title: ``order_id`` → "Order ID", ``amount_eur`` → "Amount EUR"."""
    words = [_ACRONYMS.get(word, word) for word in words_of(name)]
    if not words:
        return name
    first = words[0]
    return " ".join([first[:1].upper() + first[1:], *words[1:]])


def field_title(model: type[BaseModel] | None, name: str) -> str:
    """What a field is called: its ``Field(title=...)``, else its name humanized."""
    info = _field(model, name)
    if info is not None and info.title:
        return info.title
    return humanize(name)


# --------------------------------------------------------------------------------------------
# Values.


def is_money(model: type[BaseModel] | None, name: str) -> bool:
    """Whether the field ``name`` holds money.

    The schema decides when it says: ``json_schema_extra={"money": True}`` (or ``False``).
    Otherwise a word of the field's name decides: amount, price, cost, total, fee or refund,
    also plural or with "sub" (``amount``, ``unit_price``, ``shippingFees``, ``subtotal``).
    Words, not substrings: ``coffee_count`` and ``discount_code`` are no money.
    """
    info = _field(model, name)
    extra = info.json_schema_extra if info is not None else None
    if isinstance(extra, Mapping) and isinstance(extra.get(MONEY_FLAG), bool):
        return bool(extra[MONEY_FLAG])
    return any(_MONEY_WORD.fullmatch(word) for word in words_of(name))


def format_value(model: type[BaseModel] | None, name: str, value: Any) -> str:
    """The argument ``name`` = ``value`` as a person reads it (see the module's rules)."""
    if isinstance(value, list | tuple) and all(_is_plain(item) for item in value):
        shown = [_scalar(model, name, item) for item in value]
        return ", ".join(shown) if shown else EMPTY_SHOWN
    if _is_plain(value):
        return _scalar(model, name, value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _is_plain(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | Decimal | Enum)


def _scalar(model: type[BaseModel] | None, name: str, value: Any) -> str:
    if isinstance(value, Enum):
        value = value.value
    if value is None:
        return NONE_SHOWN
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, str):
        return value if value else EMPTY_SHOWN
    if isinstance(value, int | float | Decimal):
        return _number(model, name, value)
    return str(value)


def _number(model: type[BaseModel] | None, name: str, value: int | float | Decimal) -> str:
    money = is_money(model, name)
    if isinstance(value, int) and not (money and _declares_fraction(model, name)):
        plain = not money and bool(_PLAIN_WORDS.intersection(words_of(name)))
        return str(value) if plain else f"{value:,}"
    try:
        exact = Decimal(str(value))  # the shortest text of a float: no binary noise
    except InvalidOperation:
        return str(value)
    if not exact.is_finite():
        return str(value)
    places = max(-int(exact.as_tuple().exponent), 2 if money else 0)
    return f"{exact:,.{places}f}"


def _declares_fraction(model: type[BaseModel] | None, name: str) -> bool:
    """Whether the field is declared ``float`` or ``Decimal``: a whole 120 then shows 120.00."""
    info = _field(model, name)
    return info is not None and bool(_types_of(info.annotation) & {float, Decimal})


def _types_of(annotation: Any) -> set[Any]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _types_of(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return {t for arg in get_args(annotation) for t in _types_of(arg)}
    return {annotation}


def _field(model: type[BaseModel] | None, name: str) -> FieldInfo | None:
    if model is None:
        return None
    return model.model_fields.get(name)


_GROUPED_NUMBER: Final = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
"""A number with thousands separators: ``1,234.50``, ``-12,000``."""


def typed_number(raw: str) -> str:
    """A number typed back as a question shows it (``1,234.50``), without its separators
    (``1234.50``); any other text as it was typed (the field's check says what is wrong)."""
    text = raw.strip()
    return text.replace(",", "") if _GROUPED_NUMBER.fullmatch(text) else raw
