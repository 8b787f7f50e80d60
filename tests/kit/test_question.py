"""The kit's question view: one title, one set of value rules, one outcome, for every channel."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from bot import Sensitive
from bot.core.dtos import ToolCallApprovalAsk
from bot.core.sensitive import MASK
from channels.kit.offers import Offered, offered
from channels.kit.outcomes import (
    Approved,
    Cancelled,
    DecidedAtOnce,
    Expired,
    Rejected,
    Responded,
    Withdrawn,
    words_of,
)
from channels.kit.question import NEW_HIDDEN, changes_of, question_title, shown_fields

TEMPLATE = "Refund {amount} to the card of order {order_id}?"


class Refund(BaseModel):
    order_id: str = Field(title="Order ID")
    amount: float
    email: Annotated[str, Sensitive()] = "x@example.com"


def test_the_title_is_the_template_filled_with_the_values_as_shown() -> None:
    title = question_title(
        TEMPLATE,
        model=Refund,
        arguments={"order_id": "A-1001", "amount": 1234.5},
        description="Refunds an amount to the card an order was paid with.",
        tool="refund-card-tool",
    )
    assert title == "Refund 1,234.50 to the card of order A-1001?"


def test_a_template_never_shows_a_sensitive_value() -> None:
    title = question_title(
        "Mail {email}?",
        model=Refund,
        arguments={"email": "x@example.com"},
        description="",
        tool="t",
    )
    assert title == f"Mail {MASK}?"


def test_without_a_usable_template_the_description_then_the_tool_in_words() -> None:
    asked = {"order_id": "A-1", "amount": 1}
    for template in (None, "Refund {missing}?", "Refund {amount"):
        title = question_title(
            template, model=Refund, arguments=asked, description="Refunds a card.\nMore.", tool="t"
        )
        assert title == "Refunds a card"
    nothing = question_title(
        None, model=None, arguments={}, description="", tool="refund-card-tool"
    )
    assert nothing == "Approve refund card?"  # never the tool's id


def test_fields_are_titled_and_formatted_once_for_every_channel() -> None:
    shown = shown_fields(Refund, {"order_id": "A-1", "amount": 120.0, "email": "x@example.com"})
    assert [(f.title, f.value) for f in shown] == [
        ("Order ID", "A-1"),
        ("Amount", "120.00"),
        ("Email", MASK),
    ]


def test_an_edit_says_what_changed_was_and_now_and_hides_a_sensitive_value() -> None:
    asked = {"order_id": "A-1", "amount": 120.0, "email": "x@example.com"}
    changes = changes_of(
        Refund, asked, {"amount": 100.0, "email": "y@example.com", "order_id": "A-1"}
    )
    assert [(c.title, c.was, c.now) for c in changes] == [
        ("Amount", "120.00", "100.00"),
        ("Email", MASK, NEW_HIDDEN),
    ]


def test_each_outcome_has_a_tone_of_its_own() -> None:
    tones = {
        words_of(outcome).tone
        for outcome in (
            Approved(by="a"),
            Rejected(by="a"),
            Responded(by="a", response="r"),
            Expired(),
            Withdrawn(),
            Cancelled(),
        )
    }
    assert len(tones) == 6
    assert words_of(DecidedAtOnce(approved=False)).tone == "rejected"


def test_outcome_sentences() -> None:
    you = {"alice": "you"}.get
    said = [
        words_of(o).sentence(lambda who: you(who) or who)
        for o in (
            Approved(by="alice"),
            Approved(by="bob", overrides={"amount": 1}),
            Rejected(by="alice", reason="too much"),
            Responded(by="alice", response="Done already."),
            Expired(),
            Cancelled(by="alice"),
        )
    ]
    assert said == [
        "Approved by you.",
        "Approved with changes by bob.",
        "Rejected by you: too much",
        "Answered instead of the tool by you: Done already.",
        "Expired: nobody answered in time.",
        "Stopped by you.",
    ]


def test_offered_follows_allows_kind_and_respond_is_the_one_free_text() -> None:
    ask = ToolCallApprovalAsk(tool="t", arguments={}, call_id="c")
    assert offered(ask, tool_input=Refund, reads_replies=True) == Offered(reply=True)
    graph = ask.model_copy(update={"allowed_decisions": ("approve", "respond")})
    assert offered(graph, tool_input=Refund, reads_replies=True) == Offered(
        reject=False, edit=False, respond=True, reply=False
    )
    assert all(
        offered(a, tool_input=Refund).allows(kind) == a.allows_kind(kind)
        for a in (ask, graph)
        for kind in ("approve", "reject", "edit", "respond")
    )
