"""Block Kit rendering: every surface re-validated by slack_sdk, limits, masking, pages."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, model_validator
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from bot.core.sensitive import MASK, Sensitive
from channels.kit.outcomes import Approved, Cancelled, DecidedAtOnce, Outcome, Rejected, Withdrawn
from channels.slack.render import (
    APPROVE_ACTION,
    EDIT_ACTION,
    EDIT_MODAL,
    PENDING_PAGE_ACTION,
    REJECT_ACTION,
    REJECT_MODAL,
    ApprovalView,
    RenderedMessage,
    RenderError,
    action_kind,
)
from channels.slack.render_edit import parse_edit_submission, validate_edit_submission
from channels.slack.render_message import REPLY_HINT, approval_message, outcome_message
from channels.slack.render_modal import edit_modal, reject_modal, reject_reason
from channels.slack.render_pending import (
    NEXT_PAGE_ACTION,
    PREVIOUS_PAGE_ACTION,
    PendingItemView,
    home_view,
    pending_list,
)
from tests.slack.checks import as_json, blocks_of

PAUSE_ID = "5f0c2a9e8b7d4c3e9a1f6b2d7c8e9f01"
SECRET = "carol@example.com"


class RefundCardInput(BaseModel):
    order_id: str
    amount: float
    email: Annotated[str, Sensitive()]


class Speed(Enum):
    SLOW = "slow"
    FAST = "fast"


class ShipInput(BaseModel):
    order_id: str
    quantity: int = 1
    weight: float
    express: bool = False
    currency: Literal["EUR", "USD"] = "EUR"
    speed: Speed = Speed.SLOW
    tags: list[str] = Field(default_factory=list)
    note: str | None = Field(default=None, description="Shown to the courier.")
    token: Annotated[str, Sensitive()]


class NotToSelfInput(BaseModel):
    sender: str
    recipient: str

    @model_validator(mode="after")
    def _different(self) -> NotToSelfInput:
        if self.sender == self.recipient:
            raise ValueError("sender and recipient must differ")
        return self


def approval(**changes: Any) -> ApprovalView:
    fields: dict[str, Any] = {
        "pause_id": PAUSE_ID,
        "tool": "refund-card-tool",
        "tool_description": "Refunds a card payment.",
        "arguments": {"order_id": "7", "amount": 12.5, "email": SECRET},
        "input_model": RefundCardInput,
        "agent": "refund-agent",
        "owner_id": "U123",
        "role": "refund-approvers",
        "role_description": "Approves card refunds",
    }
    return ApprovalView(**(fields | changes))


def ship_approval(arguments: dict[str, Any] | None = None) -> ApprovalView:
    given_arguments = {
        "order_id": "A-1",
        "quantity": 3,
        "weight": 2.5,
        "express": True,
        "currency": "USD",
        "speed": "fast",
        "tags": ["fragile"],
        "token": SECRET,
    }
    return approval(
        tool="ship-tool",
        arguments=given_arguments if arguments is None else arguments,
        input_model=ShipInput,
    )


# --------------------------------------------------------------------------------------------
# Checks shared by every test.


def nodes(obj: object) -> Iterator[Mapping[str, Any]]:
    if isinstance(obj, Mapping):
        yield obj
        for value in obj.values():
            yield from nodes(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from nodes(item)


def strings(obj: object) -> Iterator[tuple[Mapping[str, Any], str, str]]:
    """Every string in a JSON tree, with the object and key it is stored under."""
    for node in nodes(obj):
        for key, value in node.items():
            values = value if isinstance(value, list) else [value]
            for item in values:
                if isinstance(item, str):
                    yield node, key, item


def assert_blocks_valid(blocks: list[dict[str, Any]], *, max_blocks: int) -> None:
    assert 0 < len(blocks) <= max_blocks
    for block in blocks:
        parsed = Block.parse(block)
        assert parsed is not None
        assert parsed.to_dict() == block  # slack_sdk validates on the way
        if block["type"] == "section":
            assert len(block.get("text", {}).get("text", "")) <= 3000
            assert len(block.get("fields", [])) <= 10
            assert all(len(f["text"]) <= 2000 for f in block.get("fields", []))
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= 150
    keys = [
        (block.get("block_id"), node["action_id"])
        for block in blocks
        for node in nodes(block)
        if "action_id" in node
    ]
    assert len(keys) == len(set(keys))
    for node in nodes(blocks):
        if node.get("type") == "button":
            assert len(node["value"]) <= 2000


def assert_message_valid(message: RenderedMessage, pause_ids: set[str]) -> None:
    assert_blocks_valid(blocks_of(message), max_blocks=50)
    action_ids = [n["action_id"] for n in nodes(blocks_of(message)) if "action_id" in n]
    assert len(action_ids) == len(set(action_ids))  # unique in the whole message
    assert message.text
    assert_pause_ids_only_in_button_values(blocks_of(message), message.text, pause_ids)


def assert_pause_ids_only_in_button_values(tree: object, text: str, pause_ids: set[str]) -> None:
    """A pause id may only be a button's value: never text, a block id or an action id."""
    for pause_id in pause_ids:
        assert pause_id not in text
    for node, key, value in strings(tree):
        if key == "private_metadata":
            continue  # the caller's own ids for the modal; only the clicking user sees it
        if any(pause_id in value for pause_id in pause_ids):
            assert (node.get("type"), key) == ("button", "value"), (key, value)


def assert_view_valid(view: dict[str, Any], *, pause_ids: set[str]) -> None:
    rebuilt = View(**view).to_dict()
    assert rebuilt == view
    assert_blocks_valid(view["blocks"], max_blocks=100)
    assert_pause_ids_only_in_button_values(view, "", pause_ids)


def buttons(blocks: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    return [node for node in nodes(blocks) if node.get("type") == "button"]


def all_text(tree: object) -> str:
    return "\n".join(value for _, key, value in strings(tree) if key != "value")


# --------------------------------------------------------------------------------------------
# Action ids.


@pytest.mark.parametrize(
    ("action_id", "kind"),
    [
        (APPROVE_ACTION, "approve"),
        (REJECT_ACTION, "reject"),
        (EDIT_ACTION, "edit"),
        (f"{APPROVE_ACTION}:3", "approve"),
        (f"{EDIT_ACTION}:12", "edit"),
        (PREVIOUS_PAGE_ACTION, "page"),
        (NEXT_PAGE_ACTION, "page"),
        ("countersign_approvex", None),
        ("countersign_approve:a b", None),
        ("something_else", None),
        ("", None),
    ],
)
def test_action_kind(action_id: str, kind: str | None) -> None:
    assert action_kind(action_id) == kind


# --------------------------------------------------------------------------------------------
# The approval message.


def test_approval_message_shows_the_question_and_the_buttons() -> None:
    message = approval_message(approval())

    assert_message_valid(message, {PAUSE_ID})
    header, arguments, asked_by, actions, hint = blocks_of(message)
    assert header["text"]["text"] == "Refunds a card payment"
    assert [f["text"] for f in arguments["fields"]] == [
        "*Order ID*\n7",
        "*Amount*\n12.50",
        f"*Email*\n{MASK}",
    ]
    assert asked_by["elements"][0]["text"] == (
        "Asked by <@U123> through refund-agent · Approves card refunds"  # no tool id
    )
    assert [(b["text"]["text"], b.get("style"), b["action_id"]) for b in buttons([actions])] == [
        ("Approve", "primary", APPROVE_ACTION),
        ("Reject", "danger", REJECT_ACTION),
        ("Edit & approve", None, EDIT_ACTION),
    ]
    assert {b["value"] for b in buttons([actions])} == {PAUSE_ID}
    assert hint["elements"][0]["text"] == REPLY_HINT
    assert SECRET not in json.dumps(blocks_of(message)) + message.text
    assert message.text == "Approval needed: Refunds a card payment"


def test_no_reply_hint_when_the_role_reads_no_replies() -> None:
    message = approval_message(approval(reads_replies=False))

    assert_message_valid(message, {PAUSE_ID})
    assert blocks_of(message)[-1]["type"] == "actions"
    assert REPLY_HINT not in all_text(blocks_of(message))


def test_no_edit_button_without_an_input_model() -> None:
    message = approval_message(approval(input_model=None))

    assert_message_valid(message, {PAUSE_ID})
    assert [b["action_id"] for b in buttons(blocks_of(message))] == [
        APPROVE_ACTION,
        REJECT_ACTION,
    ]


def test_masks_already_masked_and_unmasked_arguments_alike() -> None:
    masked = approval(arguments={"order_id": "7", "amount": 1, "email": MASK})
    assert (
        approval_message(masked).blocks
        == approval_message(
            approval(arguments={"order_id": "7", "amount": 1, "email": SECRET})
        ).blocks
    )


def test_values_without_a_model_read_like_a_person_wrote_them() -> None:
    view = approval(
        input_model=None,
        arguments={"items": [1, "a"], "meta": {"x": None}, "ok": True, "refund_total": 5.5},
    )

    fields = [f["text"] for f in blocks_of(approval_message(view))[1]["fields"]]

    assert fields == [
        "*Items*\n1, a",
        '*Meta*\n{"x": null}',
        "*Ok*\nYes",
        "*Refund total*\n5.50",
    ]


def test_outside_text_is_escaped_so_it_cannot_ping_or_link() -> None:
    view = approval(
        tool_description="Pings <!channel> & <https://evil.example|click>",
        arguments={"note": "<!here> hi <@U999>"},
        input_model=None,
        agent="<!everyone>",
    )

    message = approval_message(view)

    assert_message_valid(message, {PAUSE_ID})
    header, *rest = blocks_of(message)
    assert header["text"]["type"] == "plain_text"  # Slack links and pings nothing in it
    text = all_text(rest) + message.text
    for raw in ("<!channel>", "<!here>", "<!everyone>", "<https://", "<@U999>"):
        assert raw not in text
    assert "&lt;!channel&gt; &amp;" in text


def test_huge_arguments_are_truncated_not_refused() -> None:
    arguments: dict[str, Any] = {
        "body": "x" * 100_000,
        "rows": list(range(50_000)),
        "amp": "&" * 5_000,  # escaping grows it: the cut must stay within limits
    }
    arguments |= {f"arg_{i}": i for i in range(200)}
    view = approval(
        tool="t" * 500,
        tool_description="d" * 10_000,
        arguments=arguments,
        input_model=None,
    )

    message = approval_message(view)

    assert_message_valid(message, {PAUSE_ID})
    assert len(blocks_of(message)[0]["text"]["text"]) <= 150
    assert blocks_of(message)[1]["text"]["text"].startswith("ddd")  # the whole description
    fields = [f["text"] for b in blocks_of(message) for f in b.get("fields", [])]
    assert fields[0].startswith("*Body*\nxxx")
    assert all(field.endswith("…") for field in fields[:3])
    assert "&am…" not in fields[2]
    assert fields[2].count("&amp;") > 100
    assert fields[-1] == "_…and 164 more_"
    assert len(fields) == 40


@settings(max_examples=60, deadline=None)
@given(
    arguments=st.dictionaries(
        st.text(min_size=1, max_size=300),
        st.one_of(st.text(max_size=5000), st.integers(), st.none(), st.lists(st.text())),
        max_size=80,
    ),
    tool=st.text(min_size=1, max_size=400),
    description=st.text(max_size=4000),
)
def test_any_arguments_render_within_limits(
    arguments: dict[str, Any], tool: str, description: str
) -> None:
    view = approval(tool=tool, tool_description=description, arguments=arguments, input_model=None)

    assert_message_valid(approval_message(view), {PAUSE_ID})
    assert_message_valid(outcome_message(view, Withdrawn()), {PAUSE_ID})


def test_an_oversized_pause_id_is_a_render_error() -> None:
    with pytest.raises(RenderError) as caught:
        approval_message(approval(pause_id="p" * 2001))

    assert "p" * 40 not in str(caught.value)


# --------------------------------------------------------------------------------------------
# Outcomes.


@pytest.mark.parametrize(
    ("outcome", "expected", "summary"),
    [
        (Approved(by="U777"), "*Approved* by <@U777>", "approved by <@U777>"),
        (
            Rejected(by="U777", reason="too high\nsecond line"),
            "*Rejected* by <@U777>\n>too high\n>second line",
            "rejected by <@U777>",
        ),
        (Rejected(by="U777"), "*Rejected* by <@U777>", "rejected by <@U777>"),
        (DecidedAtOnce(approved=True), "*Decided at once: approved*", "decided at once: approved"),
        (
            DecidedAtOnce(approved=False, reason="policy"),
            "*Decided at once: rejected*\n>policy",
            "decided at once: rejected",
        ),
        (Withdrawn(), "*No longer needed*", "no longer needed"),
        (Cancelled(), "*Cancelled*", "cancelled"),
    ],
)
def test_outcome_replaces_the_buttons_with_what_happened(
    outcome: Outcome, expected: str, summary: str
) -> None:
    message = outcome_message(approval(), outcome)

    assert_message_valid(message, {PAUSE_ID})
    assert buttons(blocks_of(message)) == []
    assert blocks_of(message)[0]["text"]["text"] == "Refunds a card payment"
    assert f"*Email*\n{MASK}" in [f["text"] for f in blocks_of(message)[1]["fields"]]
    assert any(expected in b.get("text", {}).get("text", "") for b in blocks_of(message))
    assert message.text == f"Refunds a card payment: {summary}"
    assert REPLY_HINT not in all_text(blocks_of(message))
    assert SECRET not in json.dumps(blocks_of(message))


def test_approved_with_overrides_shows_the_edited_arguments_masked() -> None:
    outcome = Approved(
        by="U777",
        overrides={"order_id": "7", "amount": 10.0, "email": "dave@example.com"},
    )

    message = outcome_message(approval(), outcome)

    assert_message_valid(message, {PAUSE_ID})
    headline, edits = blocks_of(message)[3], blocks_of(message)[4]
    assert headline["text"]["text"].endswith("What changed:")
    assert [f["text"] for f in edits["fields"]] == [
        "*Amount*\n12.50 → 10.00",  # was → now
        f"*Email*\n{MASK} → a new value (hidden)",
    ]
    assert "dave@example.com" not in json.dumps(blocks_of(message)) + message.text


def test_unchanged_overrides_say_nothing_about_edits() -> None:
    outcome = Approved(by="U777", overrides={"order_id": "7", "amount": 12.5})

    message = outcome_message(approval(), outcome)

    assert "edited" not in all_text(blocks_of(message))


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (Approved(by="U7", read_as="lgtm"), 'Read "lgtm" as approve'),
        (
            Rejected(by="U7", reason="no", read_as="nope,\n too <b>"),
            'Read "nope, too &lt;b&gt;" as reject',
        ),
    ],
)
def test_a_reply_read_from_the_thread_is_shown(outcome: Outcome, expected: str) -> None:
    message = outcome_message(approval(), outcome)

    assert_message_valid(message, {PAUSE_ID})
    assert blocks_of(message)[-1]["type"] == "context"
    assert blocks_of(message)[-1]["elements"][0]["text"] == expected


def test_a_huge_reason_is_truncated() -> None:
    message = outcome_message(approval(), Rejected(by="U7", reason="no\n" * 5_000))

    assert_message_valid(message, {PAUSE_ID})


# --------------------------------------------------------------------------------------------
# Modals.


def test_reject_modal() -> None:
    metadata = json.dumps({"pause_id": PAUSE_ID, "channel": "C1", "ts": "1.2"})

    view = as_json(reject_modal(metadata))

    assert_view_valid(view, pause_ids={PAUSE_ID})
    assert view["callback_id"] == REJECT_MODAL
    assert (view["submit"]["text"], view["close"]["text"]) == ("Reject", "Cancel")
    (reason,) = view["blocks"]
    assert reason["block_id"] == "reason"
    assert reason["optional"] is True
    assert reason["element"]["action_id"] == "reason"
    assert reason["element"]["multiline"] is True
    assert view["private_metadata"] == metadata


def test_the_pause_id_check_catches_a_leak() -> None:
    leaky = [
        {
            "type": "section",
            "block_id": PAUSE_ID,
            "text": {"type": "mrkdwn", "text": "x"},
        }
    ]

    with pytest.raises(AssertionError):
        assert_pause_ids_only_in_button_values(leaky, "", {PAUSE_ID})
    with pytest.raises(AssertionError):
        assert_pause_ids_only_in_button_values([], f"about {PAUSE_ID}", {PAUSE_ID})


def test_reject_reason() -> None:
    assert reject_reason({"reason": {"reason": {"value": "  too high "}}}) == "too high"
    assert reject_reason({"reason": {"reason": {"value": None}}}) is None
    assert reject_reason({"reason": {"reason": {"value": "   "}}}) is None
    assert reject_reason({}) is None


def test_private_metadata_over_3000_characters_is_a_render_error() -> None:
    with pytest.raises(RenderError, match="private_metadata"):
        reject_modal("x" * 3001)
    with pytest.raises(RenderError, match="private_metadata"):
        edit_modal(approval(), "x" * 3001)


def inputs(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}


def test_edit_modal_has_one_input_per_field() -> None:
    view = as_json(edit_modal(ship_approval(), private_metadata="{}"))

    assert_view_valid(view, pause_ids={PAUSE_ID})
    assert view["callback_id"] == EDIT_MODAL
    assert len(view["title"]["text"]) <= 24
    blocks = inputs(view)
    assert list(blocks) == list(ShipInput.model_fields)
    assert {b["element"]["action_id"] for b in blocks.values()} == {"value"}
    kinds = {key: b["element"]["type"] for key, b in blocks.items()}
    assert kinds == {
        "order_id": "plain_text_input",
        "quantity": "number_input",
        "weight": "number_input",
        "express": "static_select",
        "currency": "static_select",
        "speed": "static_select",
        "tags": "plain_text_input",
        "note": "plain_text_input",
        "token": "plain_text_input",
    }
    assert blocks["quantity"]["element"]["is_decimal_allowed"] is False
    assert blocks["weight"]["element"]["is_decimal_allowed"] is True
    assert blocks["order_id"]["element"]["initial_value"] == "A-1"
    assert blocks["quantity"]["element"]["initial_value"] == "3"
    assert blocks["express"]["element"]["initial_option"]["text"]["text"] == "Yes"
    assert blocks["currency"]["element"]["initial_option"]["text"]["text"] == "USD"
    assert blocks["speed"]["element"]["initial_option"]["text"]["text"] == "fast"
    assert json.loads(blocks["tags"]["element"]["initial_value"]) == ["fragile"]
    assert blocks["tags"]["label"]["text"] == "Tags (JSON)"
    assert blocks["order_id"]["label"]["text"] == "Order ID"
    assert view["blocks"][0]["text"]["text"] == (
        "*Refunds a card payment*\nChange what needs changing, then approve."
    )
    assert blocks["note"]["hint"]["text"] == "Shown to the courier."
    optional = {key for key, b in blocks.items() if b["optional"]}
    assert optional == {
        "quantity",
        "express",
        "currency",
        "speed",
        "tags",
        "note",
        "token",
    }


def test_edit_modal_never_shows_a_sensitive_value() -> None:
    view = as_json(edit_modal(approval(), private_metadata="{}"))

    assert_view_valid(view, pause_ids={PAUSE_ID})
    email = inputs(view)["email"]
    assert "initial_value" not in email["element"]
    assert email["hint"]["text"] == "hidden; leave empty to keep"
    assert email["optional"] is True
    assert SECRET not in json.dumps(view)


def test_edit_modal_prefills_defaults_of_arguments_not_given() -> None:
    view = as_json(
        edit_modal(ship_approval({"order_id": "A-1", "weight": 1.0, "token": SECRET}), "{}")
    )

    blocks = inputs(view)
    assert blocks["quantity"]["element"]["initial_value"] == "1"
    assert blocks["express"]["element"]["initial_option"]["text"]["text"] == "No"
    assert blocks["speed"]["element"]["initial_option"]["text"]["text"] == "slow"


def test_edit_modal_does_not_prefill_a_value_too_long_for_an_input() -> None:
    view = as_json(edit_modal(approval(arguments={"order_id": "x" * 4000, "amount": 1}), "{}"))

    assert_view_valid(view, pause_ids={PAUSE_ID})
    order_id = inputs(view)["order_id"]
    assert "initial_value" not in order_id["element"]
    assert order_id["optional"] is True
    assert "leave empty to keep" in order_id["hint"]["text"]


def test_edit_modal_needs_an_input_model() -> None:
    with pytest.raises(RenderError, match="no input model"):
        edit_modal(approval(input_model=None), "{}")


# --------------------------------------------------------------------------------------------
# Edit submissions.


def state(**values: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    return {block_id: {"value": value} for block_id, value in values.items()}


def text(value: str | None) -> dict[str, Any]:
    return {"type": "plain_text_input", "value": value}


def number(value: str | None) -> dict[str, Any]:
    return {"type": "number_input", "value": value}


def option(index: int | None) -> dict[str, Any]:
    selected = None if index is None else {"value": str(index)}
    return {"type": "static_select", "selected_option": selected}


def test_parse_reads_every_input_back_and_keeps_an_empty_sensitive_field() -> None:
    submission = state(
        order_id=text("A-2"),
        quantity=number("4"),
        weight=number("1.25"),
        express=option(1),
        currency=option(0),
        speed=option(0),
        tags=text('["a", "b"]'),
        note=text(None),
        token=text(None),
    )

    parsed = parse_edit_submission(ship_approval(), submission)

    assert parsed == {
        "order_id": "A-2",
        "quantity": 4,
        "weight": 1.25,
        "express": False,
        "currency": "EUR",
        "speed": "slow",
        "tags": ["a", "b"],
        "note": None,  # emptied, and the field takes None
        "token": SECRET,
    }


def test_parse_takes_a_new_sensitive_value() -> None:
    submission = state(order_id=text("7"), amount=number("3"), email=text("new@x.io"))

    assert parse_edit_submission(approval(), submission) == {
        "order_id": "7",
        "amount": 3.0,
        "email": "new@x.io",
    }


def test_validate_returns_the_validated_overrides() -> None:
    submission = state(order_id=text("8"), amount=number("9.5"), email=text(None))

    overrides, errors = validate_edit_submission(approval(), submission)

    assert errors == {}
    assert overrides == {"order_id": "8", "amount": 9.5, "email": SECRET}


def test_validate_maps_errors_to_the_blocks_of_their_fields() -> None:
    submission = state(
        order_id=text("A-2"),
        quantity=number("2.5"),
        weight=number("heavy"),
        tags=text("[not json"),
        token=text(None),
    )

    overrides, errors = validate_edit_submission(ship_approval(), submission)

    assert overrides is None
    assert set(errors) == {"quantity", "weight", "tags"}
    assert errors["quantity"] == "Enter a whole number."
    assert errors["weight"] == "Enter a number."
    assert errors["tags"].startswith("Enter valid JSON")
    assert all(len(message) <= 300 for message in errors.values())


def test_validate_asks_again_for_a_sensitive_value_it_only_knows_masked() -> None:
    view = approval(arguments={"order_id": "7", "amount": 1, "email": MASK})
    submission = state(order_id=text("7"), amount=number("1"), email=text(None))

    overrides, errors = validate_edit_submission(view, submission)

    assert overrides is None
    assert list(errors) == ["email"]
    assert "enter it again" in errors["email"]
    assert MASK not in parse_edit_submission(view, submission).values()


def test_model_level_errors_go_on_the_first_input() -> None:
    view = approval(
        tool="send",
        arguments={"sender": "a", "recipient": "b"},
        input_model=NotToSelfInput,
    )
    submission = state(sender=text("a"), recipient=text("a"))

    overrides, errors = validate_edit_submission(view, submission)

    assert overrides is None
    assert list(errors) == ["sender"]
    assert "must differ" in errors["sender"]


# --------------------------------------------------------------------------------------------
# The pending list and the App Home.


T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def pending(count: int) -> list[PendingItemView]:
    """``count`` items, given oldest first; item ``i`` was asked ``i`` minutes after T0."""
    return [
        PendingItemView(
            pause_id=f"{i:032x}",
            tool=f"tool-{i}",
            agent="refund-agent",
            arguments={
                "order_id": str(i),
                "amount": i,
                "email": SECRET if i % 2 else MASK,
            },
            input_model=RefundCardInput if i % 2 else None,  # masked upstream
            owner_id="U123",
            asked_at=(T0 + timedelta(minutes=i)).isoformat(),
            role="refund-approvers",
        )
        for i in range(count)
    ]


def tools_shown(message_blocks: list[dict[str, Any]]) -> list[str]:
    """The tools of the items shown; with no description an item is titled "Approve <the
    tool's name in words>?" ("tool-7" reads "tool 7")."""
    prefix = "*Approve tool "
    return [
        b["text"]["text"].split("*")[1].removeprefix("Approve ").removesuffix("?").replace(" ", "-")
        for b in message_blocks
        if b["type"] == "section" and b.get("text", {}).get("text", "").startswith(prefix)
    ]


def test_pending_list_pages_newest_first() -> None:
    items = pending(25)
    ids = {item.pause_id for item in items}

    pages = [pending_list(items, page=page) for page in (1, 2, 3)]

    for message in pages:
        assert_message_valid(message, ids)
        assert SECRET not in json.dumps(blocks_of(message))
    shown = [tools_shown(blocks_of(message)) for message in pages]
    assert [len(tools) for tools in shown] == [10, 10, 5]
    assert [tool for tools in shown for tool in tools] == [f"tool-{i}" for i in range(24, -1, -1)]
    pagers = [
        {
            b["action_id"]: b["value"]
            for b in buttons(blocks_of(m))
            if action_kind(b["action_id"]) == "page"
        }
        for m in pages
    ]
    assert pagers == [
        {NEXT_PAGE_ACTION: "2"},
        {PREVIOUS_PAGE_ACTION: "1", NEXT_PAGE_ACTION: "3"},
        {PREVIOUS_PAGE_ACTION: "2"},
    ]
    assert "page 2 of 3" in all_text(pages[1].blocks)


def test_each_pending_item_has_its_own_buttons() -> None:
    items = pending(3)

    message = pending_list(items, page=1)

    assert_message_valid(message, {item.pause_id for item in items})
    answers = [b for b in buttons(blocks_of(message)) if action_kind(b["action_id"]) != "page"]
    by_pause: dict[str, list[str | None]] = {}
    for button in answers:
        by_pause.setdefault(button["value"], []).append(action_kind(button["action_id"]))
    assert by_pause == {
        f"{2:032x}": ["approve", "reject"],
        f"{1:032x}": ["approve", "reject", "edit"],
        f"{0:032x}": ["approve", "reject"],
    }
    assert not any(b["action_id"].startswith(PENDING_PAGE_ACTION) for b in answers)


def test_pending_list_shows_masked_arguments_and_a_date() -> None:
    item = pending(2)[1]

    message = pending_list([item], page=1)

    section = next(b for b in blocks_of(message) if b.get("fields"))
    assert f"*Email*\n{MASK}" in [f["text"] for f in section["fields"]]
    asked_at = int((T0 + timedelta(minutes=1)).timestamp())
    assert f"<!date^{asked_at}^" in section["text"]["text"]


def test_an_empty_pending_list_is_a_friendly_line() -> None:
    message = pending_list([], page=1)

    assert_message_valid(message, set())
    assert blocks_of(message) == [
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": "Nothing waits for you.",
                "verbatim": True,
            },
        }
    ]
    assert buttons(blocks_of(message)) == []


def test_a_page_past_the_end_shows_the_last_page() -> None:
    items = pending(12)

    assert pending_list(items, page=9) == pending_list(items, page=2)
    assert pending_list(items, page=0) == pending_list(items, page=1)


def test_unreadable_times_go_last() -> None:
    items = pending(2)
    odd = PendingItemView(
        pause_id="f" * 32,
        tool="tool-odd",
        agent="a",
        arguments={},
        input_model=None,
        owner_id="U1",
        asked_at="yesterday",
        role="r",
    )

    message = pending_list([odd, *items], page=1)

    assert tools_shown(blocks_of(message)) == ["tool-1", "tool-0", "tool-odd"]


def test_a_page_that_cannot_fit_50_blocks_is_a_render_error() -> None:
    with pytest.raises(RenderError, match="at most 50"):
        pending_list(pending(30), page=1, page_size=30)


def test_huge_pending_arguments_stay_within_limits() -> None:
    item = PendingItemView(
        pause_id=PAUSE_ID,
        tool="t" * 1000,
        agent="a" * 1000,
        arguments={f"k{i}": "v" * 10_000 for i in range(30)},
        input_model=None,
        owner_id="U1",
        asked_at=T0.isoformat(),
        role="r" * 1000,
    )

    message = pending_list([item] * 10, page=1)

    assert_blocks_valid(blocks_of(message), max_blocks=50)
    section = next(b for b in blocks_of(message) if b.get("fields"))
    assert section["fields"][-1]["text"] == "_…and 21 more_"


def test_home_view_lists_the_same_items() -> None:
    items = pending(25)

    view = as_json(home_view(items, page=1))

    assert_view_valid(view, pause_ids={item.pause_id for item in items})
    assert view["type"] == "home"
    assert view["blocks"] == blocks_of(pending_list(items, page=1))


def test_home_view_of_nothing() -> None:
    view = as_json(home_view([], page=1))

    assert_view_valid(view, pause_ids=set())
    assert "Nothing waits for you." in all_text(view)


def test_a_description_of_several_lines_shows_its_first_as_the_header_and_the_rest_below() -> None:
    view = approval(tool_description="Refunds a card.\nOnly for orders paid by card.\n\nLogged.")

    message = approval_message(view)

    assert_message_valid(message, {PAUSE_ID})
    header, description = blocks_of(message)[:2]
    assert header["text"]["text"] == "Refunds a card"
    assert description["text"]["text"] == "Only for orders paid by card.\n\nLogged."


def test_a_tool_without_description_is_asked_by_its_name() -> None:
    message = approval_message(approval(tool_description="  "))

    assert blocks_of(message)[0]["text"]["text"] == "Approve refund card?"  # no tool id
    assert blocks_of(message)[1]["type"] == "section" and "fields" in blocks_of(message)[1]
