"""What a person is told about a value that was refused: one sentence per field, in our words.

Pydantic's messages ("Input should be a valid number, unable to parse string as a number") and
its documentation links are written for programmers; nothing a person reads quotes them. Each
error is said here by its ``type`` and its context (the limit it broke); a validator of the
application's own (``ValueError`` in a ``field_validator``) is said in the application's words;
an error type not listed is said generally, never with pydantic's text.

Numbers that are no numbers (infinity, NaN, a number too large to store, which reads as
infinity) are refused at the decision boundary with :data:`NOT_FINITE`: JSON cannot carry them,
so the tool would never run with what the person approved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any, Final

from pydantic import ValidationError
from pydantic_core import ErrorDetails

NOT_FINITE: Final = (
    "Enter a finite number: infinity, NaN and numbers too large to store are refused."
)
REQUIRED: Final = "Enter a value."
NOT_ACCEPTED: Final = "This value is not accepted here."
NOT_A_FIELD: Final = "This field is not part of the request."


def _limit(key: str, template: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda ctx: template.format(ctx.get(key, "the limit"))


def _length(key: str, one: str, many: str) -> Callable[[Mapping[str, Any]], str]:
    def said(ctx: Mapping[str, Any]) -> str:
        count = ctx.get(key)
        return one if count == 1 else many.format(count if count is not None else "the limit")

    return said


_NUMBER: Final = "Enter a number."
_WHOLE: Final = "Enter a whole number."
_DATE: Final = "Enter a date, like 2025-01-31."
_DATETIME: Final = "Enter a date and time, like 2025-01-31T14:30."
_TIME: Final = "Enter a time, like 14:30."
_WORDS: Final[Mapping[str, str | Callable[[Mapping[str, Any]], str]]] = {
    "missing": REQUIRED,
    "extra_forbidden": NOT_A_FIELD,
    "float_parsing": _NUMBER,
    "float_type": _NUMBER,
    "decimal_parsing": _NUMBER,
    "decimal_type": _NUMBER,
    "int_parsing": _WHOLE,
    "int_type": _WHOLE,
    "int_from_float": _WHOLE,
    "int_parsing_size": "This number is too large.",
    "finite_number": NOT_FINITE,
    "greater_than": _limit("gt", "Enter a number greater than {}."),
    "greater_than_equal": _limit("ge", "Enter {} or more."),
    "less_than": _limit("lt", "Enter a number less than {}."),
    "less_than_equal": _limit("le", "Enter {} or less."),
    "multiple_of": _limit("multiple_of", "Enter a multiple of {}."),
    "decimal_max_digits": _limit("max_digits", "Use at most {} digits."),
    "decimal_max_places": _limit("decimal_places", "Use at most {} decimal places."),
    "decimal_whole_digits": _limit("whole_digits", "Use at most {} digits before the point."),
    "string_type": "Enter a text.",
    "string_too_short": _length("min_length", REQUIRED, "Enter at least {} characters."),
    "string_too_long": _length(
        "max_length", "Enter one character at most.", "Enter at most {} characters."
    ),
    "string_pattern_mismatch": "Enter a value in the form this field takes.",
    "bool_parsing": "Choose yes or no.",
    "bool_type": "Choose yes or no.",
    "literal_error": _limit("expected", "Choose {}."),
    "enum": _limit("expected", "Choose {}."),
    "too_short": _length("min_length", "Give at least one item.", "Give at least {} items."),
    "too_long": _length("max_length", "Give one item at most.", "Give at most {} items."),
    "list_type": "Enter a list.",
    "tuple_type": "Enter a list.",
    "set_type": "Enter a list.",
    "dict_type": "Enter an object (in JSON, with braces).",
    "model_type": "Enter an object (in JSON, with braces).",
    "model_attributes_type": "Enter an object (in JSON, with braces).",
    "json_invalid": "Enter valid JSON.",
    "none_required": "Leave this empty.",
    "date_parsing": _DATE,
    "date_from_datetime_parsing": _DATE,
    "date_type": _DATE,
    "datetime_parsing": _DATETIME,
    "datetime_from_date_parsing": _DATETIME,
    "datetime_type": _DATETIME,
    "time_parsing": _TIME,
    "time_type": _TIME,
    "uuid_parsing": "Enter a UUID.",
    "uuid_type": "Enter a UUID.",
    "url_parsing": "Enter a URL.",
    "url_type": "Enter a URL.",
    "url_scheme": "Enter a URL.",
}


def said(detail: ErrorDetails) -> str:
    """One refused value, for a person."""
    kind = detail["type"]
    ctx: Mapping[str, Any] = detail.get("ctx") or {}
    if kind in ("value_error", "assertion_error"):
        own = ctx.get("error")
        text = str(own).strip() if own is not None else ""
        return _sentence(text) if text else NOT_ACCEPTED  # the application's own words
    words = _WORDS.get(kind, NOT_ACCEPTED)
    return words if isinstance(words, str) else words(ctx)


def by_field(error: ValidationError) -> dict[str, str]:
    """What is wrong, by the top-level field (the key a form input is named after; ``""`` for
    what is about no single field), a nested place named before its problem
    (``lines.2.qty: Enter a number.``); several problems of one field in one text."""
    grouped: dict[str, list[str]] = {}
    for detail in error.errors():
        key, where = _place(detail["loc"])
        grouped.setdefault(key, []).append(f"{where}: {said(detail)}" if where else said(detail))
    return {key: " ".join(problems) for key, problems in grouped.items()}


def described(error: ValidationError) -> str:
    """Every problem on one line, each after its field (``amount: Enter a number.``)."""
    return "; ".join(
        f"{key}: {problem}" if key else problem for key, problem in by_field(error).items()
    )


def _place(loc: Sequence[int | str]) -> tuple[str, str]:
    if not loc:
        return "", ""
    return str(loc[0]), ".".join(str(part) for part in loc[1:])


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else f"{text}."


def non_finite(value: object, path: str = "") -> Iterator[str]:
    """The places in ``value`` (nested dicts and lists, by key and index) that hold a number
    that is no number: ``inf``, ``-inf``, ``nan`` (a float or a Decimal)."""
    if _is_no_number(value):
        yield path
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from non_finite(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from non_finite(item, f"{path}.{index}" if path else str(index))


def _is_no_number(value: object) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, Decimal) and not value.is_finite()


def failure_text(error: BaseException) -> str:
    """An exception as ``Type: what happened``, for a failure a person may be told about: a
    pydantic ``ValidationError`` in our words (its model, then each field's problem), never
    with pydantic's text or its documentation links."""
    if isinstance(error, ValidationError):
        return f"{type(error).__name__}: {error.title} is not valid: {described(error)}"
    return f"{type(error).__name__}: {error}"
