"""Reading an Edit & approve form back: what an emptied input means, by what the schema takes.

The HTTP tests post the office's refund form; these read forms of schemas it does not have (a
field that takes ``None``, defaults, a sensitive value, a list edited as JSON).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel

from bot import Sensitive
from bot.core.field_errors import NOT_FINITE
from channels.web.form import read_form


class Shipment(BaseModel):
    order_id: str
    weight: float
    note: str | None = None
    boxes: int | None = 1
    tip: float = 2.5
    label: str = "standard"
    tags: list[str] | None = None
    token: Annotated[str, Sensitive()] = "s3cret"


ASKED = {
    "order_id": "A-1",
    "weight": 1.5,
    "note": "fragile",
    "boxes": 3,
    "tip": 4.0,
    "label": "gift",
    "tags": ["x"],
    "token": "real-token",
}


def form(**typed: str) -> dict[str, str]:
    filled = {"order_id": "A-1", "weight": "1.5", **typed}
    return {f"arg.{key}": value for key, value in filled.items()}


def test_an_emptied_field_is_none_where_the_schema_takes_none() -> None:
    read = read_form(Shipment, ASKED, form(note="", boxes="", tags=""))

    assert read.errors == {}
    assert read.overrides is not None
    assert (read.overrides["note"], read.overrides["boxes"], read.overrides["tags"]) == (
        None,
        None,
        None,
    )


def test_an_emptied_field_with_a_default_takes_its_default_and_a_text_is_empty() -> None:
    read = read_form(Shipment, ASKED, form(tip="", label=""))

    assert read.errors == {}
    assert read.overrides is not None
    assert (read.overrides["tip"], read.overrides["label"]) == (2.5, "")


def test_an_emptied_required_field_is_its_error() -> None:
    read = read_form(Shipment, ASKED, form(order_id="", weight=" "))

    assert read.overrides is None
    assert read.errors == {"order_id": "Enter a value.", "weight": "Enter a value."}


def test_an_emptied_sensitive_field_keeps_its_hidden_value() -> None:
    read = read_form(Shipment, ASKED, form(token=""))

    assert read.overrides is not None and read.overrides["token"] == "real-token"


def test_numbers_as_the_page_shows_them_and_numbers_that_are_none() -> None:
    read = read_form(Shipment, ASKED, form(weight="1,234.50", boxes="12,000"))
    assert read.overrides is not None
    assert (read.overrides["weight"], read.overrides["boxes"]) == (1234.5, 12000)

    for typed in ("inf", "-Infinity", "nan", "1e400"):
        refused = read_form(Shipment, ASKED, form(weight=typed))
        assert refused.errors == {"weight": NOT_FINITE}, typed
    misgrouped = read_form(Shipment, ASKED, form(weight="1,23.5"))
    assert misgrouped.errors == {"weight": "Enter a number."}


def test_errors_are_said_in_our_words() -> None:
    read = read_form(Shipment, ASKED, form(weight="heavy", boxes="2.5", tags='{"a": 1}'))

    assert read.errors == {
        "weight": "Enter a number.",
        "boxes": "Enter a whole number.",
        "tags": "Enter a list.",
    }


def test_an_undeclared_field_is_refused() -> None:
    read = read_form(Shipment, ASKED, {**form(), "arg.discount": "90", "arg.zone": "EU"})

    assert read.overrides is None
    assert read.errors == {
        "": "This form sends discount, zone, which this request does not take: "
        "open the link again and use its form."
    }
