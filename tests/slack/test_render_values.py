"""Arguments as a person reads them: field titles, numbers, money, Yes/No, masking kept."""

from __future__ import annotations

from decimal import Decimal
from enum import Enum
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from bot.core.sensitive import MASK, Sensitive
from channels.kit.values import field_title, format_value, humanize, is_money
from channels.slack.render import MAX_FIELD_TEXT, ApprovalView, argument_fields
from channels.slack.render_message import approval_message
from channels.slack.render_modal import edit_modal
from tests.slack.checks import as_json, assert_blocks_valid, blocks_of


class Priority(Enum):
    HIGH = "high"


class InvoiceInput(BaseModel):
    order_id: int
    customer_url: str = Field(title="Customer page")
    amount: float
    unit_price: Decimal
    shipping_fees: float | None = None
    subtotal: float = 0.0
    discount_code: int = 0
    quantity: int = 1
    weight: float = 0.0
    year: int = 2026
    points: int = Field(0, json_schema_extra={"money": True})
    total_count: int = 0
    refund: Annotated[float, Field(json_schema_extra={"money": False})] = 0.0
    express: bool = False
    note: str | None = None
    tags: list[str] = Field(default_factory=list)
    card: Annotated[str, Sensitive()] = ""
    priority: Priority = Priority.HIGH


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("order_id", "Order ID"),
        ("amount", "Amount"),
        ("customer_url", "Customer page"),  # Field(title=...) wins
        ("customerEmail", "Customer email"),
        ("userIDs", "User IDs"),
        ("api-key", "API key"),
        ("amount_eur", "Amount EUR"),
        ("HTTPServer", "HTTP server"),
        ("x", "X"),
    ],
)
def test_field_titles(name: str, title: str) -> None:
    assert field_title(InvoiceInput, name) == title


def test_a_name_without_letters_stays_as_it_is() -> None:
    assert humanize("__") == "__"


@pytest.mark.parametrize(
    ("name", "money"),
    [
        ("amount", True),
        ("unit_price", True),
        ("shipping_fees", True),
        ("subtotal", True),
        ("refund", False),  # the schema says no
        ("points", True),  # the schema says yes
        ("discount_code", False),  # "count" inside a word is no "amount"
        ("coffee_count", False),  # nor is "fee" inside "coffee"
        ("weight", False),
    ],
)
def test_which_fields_hold_money(name: str, money: bool) -> None:
    assert is_money(InvoiceInput, name) is money


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("amount", 120.0, "120.00"),
        ("amount", 120, "120.00"),  # declared float: a whole number is still money
        ("amount", 1234.5, "1,234.50"),
        ("amount", 0.125, "0.125"),  # never rounded
        ("amount", 1234567.891, "1,234,567.891"),
        ("unit_price", Decimal("1234.5"), "1,234.50"),
        ("unit_price", Decimal("1E+3"), "1,000.00"),
        ("shipping_fees", None, "—"),
        ("total_count", 1200, "1,200"),  # declared int: no decimals added
        ("quantity", 1234567, "1,234,567"),
        ("order_id", 1234567, "1234567"),  # an identifier keeps no separators
        ("discount_code", 12345, "12345"),
        ("year", 2026, "2026"),
        ("weight", 2.5, "2.5"),
        ("weight", 12345.75, "12,345.75"),
        ("weight", float("inf"), "inf"),
        ("express", True, "Yes"),
        ("express", False, "No"),
        ("note", None, "—"),
        ("note", "", "(empty)"),
        ("tags", ["fragile", "heavy"], "fragile, heavy"),
        ("tags", [], "(empty)"),
        ("priority", Priority.HIGH, "high"),
        ("meta", {"a": [1, None]}, '{"a": [1, null]}'),
        ("meta", [{"a": 1}], '[{"a": 1}]'),
    ],
)
def test_values(name: str, value: Any, shown: str) -> None:
    assert format_value(InvoiceInput, name, value) == shown


def test_money_points_declared_int_keeps_its_int() -> None:
    # "points" is marked money but declared int: it is shown as an int with separators
    assert format_value(InvoiceInput, "points", 1234) == "1,234"


def test_a_sensitive_field_stays_masked_whatever_its_type() -> None:
    fields = argument_fields(InvoiceInput, {"card": "4111 1111", "express": True})

    assert fields == [f"*Card*\n{MASK}", "*Express*\nYes"]


def test_fields_are_cut_within_the_limit_with_an_ellipsis() -> None:
    [field] = argument_fields(InvoiceInput, {"note": "n" * 5000})

    assert len(field) == MAX_FIELD_TEXT
    assert field.startswith("*Note*\nnnn") and field.endswith("…")


def test_the_approval_message_shows_titles_and_formatted_values() -> None:
    view = ApprovalView(
        pause_id="p" * 32,
        tool="invoice-tool",
        tool_description="Sends an invoice",
        arguments={"order_id": 42, "customer_url": "https://x.example", "amount": 1234.5},
        input_model=InvoiceInput,
        agent="billing-agent",
        owner_id="U1",
        role="invoice-approval-channel",
        role_description="Finance approves invoices",
    )

    message = approval_message(view)

    assert_blocks_valid(message.blocks, max_blocks=50)
    assert [f["text"] for f in blocks_of(message)[1]["fields"]] == [
        "*Order ID*\n42",
        "*Customer page*\nhttps://x.example",
        "*Amount*\n1,234.50",
    ]


def test_the_edit_modal_labels_its_inputs_with_the_same_titles() -> None:
    class PageInput(BaseModel):
        customer_url: str = Field(title="Customer page")
        order_id: int

    view = ApprovalView(
        pause_id="p" * 32,
        tool="page-tool",
        tool_description="Updates a page",
        arguments={"customer_url": "https://x.example", "order_id": 1},
        input_model=PageInput,
        agent="a",
        owner_id="U1",
        role="r",
    )

    modal = edit_modal(view, private_metadata="{}")

    labels = [
        block["label"]["text"] for block in as_json(modal)["blocks"] if block["type"] == "input"
    ]
    assert labels == ["Customer page", "Order ID"]
