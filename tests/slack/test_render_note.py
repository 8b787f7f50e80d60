"""The requester's note as rendered: every outcome's wording, masking, Block Kit limits."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from bot.core.sensitive import MASK, Sensitive
from channels.kit.outcomes import Approved, Cancelled, DecidedAtOnce, Outcome, Rejected, Withdrawn
from channels.slack.render import ApprovalView, RenderedMessage, channel_mention
from channels.slack.render_note import settled_note, waiting_note
from tests.slack.checks import assert_blocks_valid, blocks_of, buttons

SECRET = "carol@example.com"


class RefundInput(BaseModel):
    order_id: str
    amount: float
    email: Annotated[str, Sensitive()]


def view(**changes: Any) -> ApprovalView:
    fields: dict[str, Any] = {
        "pause_id": "5f0c2a9e8b7d4c3e9a1f6b2d7c8e9f01",
        "tool": "refund-card-tool",
        "tool_description": "Refunds a card.",
        "arguments": {"order_id": "7", "amount": 30, "email": SECRET},
        "input_model": RefundInput,
        "agent": "refund-agent",
        "owner_id": "U0OWNER",
        "role": "refund-approval-channel",
        "role_description": "A manager approves card refunds",
    }
    return ApprovalView(**(fields | changes))


def check(message: RenderedMessage) -> list[str]:
    """Valid Block Kit, no button, no pause id, no secret; the texts of its blocks."""
    assert_blocks_valid(message.blocks, max_blocks=50)
    assert buttons(message.blocks) == []
    dumped = json.dumps(message.blocks) + message.text
    assert SECRET not in dumped and "5f0c2a9e" not in dumped
    return [
        block["text"]["text"] if block["type"] == "section" else block["elements"][0]["text"]
        for block in blocks_of(message)
    ]


def test_the_waiting_note_says_where_and_who_answers() -> None:
    note = waiting_note(view(), conversation="C0APPROVALS")

    assert check(note) == [
        ":hourglass_flowing_sand: *Refunds a card* is waiting for approval in <#C0APPROVALS>.",
        f"Order ID: 7 · Amount: 30.00 · Email: {MASK}",
        "Who answers: A manager approves card refunds",
    ]
    assert note.text == "Waiting for approval in <#C0APPROVALS>: Refunds a card"


@pytest.mark.parametrize(
    ("outcome", "headline"),
    [
        (Approved(by="U0BOSS"), ":white_check_mark: *Refunds a card* was approved by <@U0BOSS>."),
        (
            Approved(by="U0BOSS", overrides={"amount": 20.0}),
            ":white_check_mark: *Refunds a card* was approved by <@U0BOSS> with edited arguments.",
        ),
        (
            Rejected(by="U0BOSS", reason="wrong\n customer"),
            ":x: *Refunds a card* was rejected by <@U0BOSS>: wrong customer",
        ),
        (Rejected(by="U0BOSS", reason="  "), ":x: *Refunds a card* was rejected by <@U0BOSS>."),
        (DecidedAtOnce(approved=True), ":white_check_mark: *Refunds a card* was approved at once."),
        (
            DecidedAtOnce(approved=False, reason="policy <!here>"),
            ":x: *Refunds a card* was rejected at once: policy &lt;!here&gt;",
        ),
        (Withdrawn(), ":heavy_minus_sign: *Refunds a card* was withdrawn: it is no longer needed."),
        (Cancelled(), ":no_entry_sign: *Refunds a card* was cancelled."),
    ],
)
def test_the_settled_note_says_what_happened(outcome: Outcome, headline: str) -> None:
    note = settled_note(view(), outcome)

    texts = check(note)
    assert texts == [headline, f"Order ID: 7 · Amount: 30.00 · Email: {MASK}"]
    assert note.text == headline.split(" ", 1)[1].replace("*", "")


def test_a_request_without_arguments_has_no_summary() -> None:
    assert len(check(waiting_note(view(arguments={}), conversation="C1"))) == 2


@pytest.mark.parametrize(
    ("conversation", "shown"),
    [
        ("C0APPROVALS", "<#C0APPROVALS>"),
        ("G0PRIVATE", "<#G0PRIVATE>"),
        ("D0DM", "a direct message"),
    ],
)
def test_where_the_request_waits(conversation: str, shown: str) -> None:
    assert channel_mention(conversation) == shown


@settings(max_examples=60, deadline=None)
@given(
    arguments=st.dictionaries(
        st.text(min_size=1, max_size=300),
        st.one_of(st.text(max_size=5000), st.floats(), st.integers(), st.none()),
        max_size=60,
    ),
    description=st.text(max_size=4000),
    reason=st.text(max_size=5000),
    role=st.text(max_size=2000),
)
def test_any_note_stays_within_limits(
    arguments: dict[str, Any], description: str, reason: str, role: str
) -> None:
    shown = view(
        tool_description=description, arguments=arguments, input_model=None, role_description=role
    )

    check(waiting_note(shown, conversation="C0APPROVALS"))
    check(settled_note(shown, Rejected(by="U0BOSS", reason=reason)))
