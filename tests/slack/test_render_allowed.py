"""The approval message offers only the answers its asker takes (an attached graph's
``allowed_decisions``) and shows what the asker says about the call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from channels.kit.offers import Offered, offered
from channels.kit.outcomes import Responded
from channels.slack.render import (
    APPROVE_ACTION,
    EDIT_ACTION,
    MAX_SECTION_TEXT,
    REJECT_ACTION,
    RESPOND_ACTION,
    RESPOND_MODAL,
)
from channels.slack.render_message import (
    APPROVE_REPLY_HINT,
    REJECT_REPLY_HINT,
    REPLY_HINT,
    approval_message,
    outcome_message,
)
from channels.slack.render_modal import (
    RESPONSE_ACTION,
    RESPONSE_BLOCK,
    modal_response,
    respond_modal,
)
from channels.slack.render_pending import PendingItemView, pending_list
from tests.slack.checks import as_json, blocks_of
from tests.slack.test_render import (
    PAUSE_ID,
    RefundCardInput,
    all_text,
    approval,
    assert_message_valid,
    buttons,
)


def action_ids(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["action_id"] for b in buttons(blocks)]


@pytest.mark.parametrize(
    ("allowed", "shown", "hint"),
    [
        (None, [APPROVE_ACTION, REJECT_ACTION, EDIT_ACTION], REPLY_HINT),
        (("approve", "edit", "reject"), [APPROVE_ACTION, REJECT_ACTION, EDIT_ACTION], REPLY_HINT),
        (("approve", "reject"), [APPROVE_ACTION, REJECT_ACTION], REPLY_HINT),
        (("approve",), [APPROVE_ACTION], APPROVE_REPLY_HINT),
        (("edit", "reject"), [REJECT_ACTION, EDIT_ACTION], REJECT_REPLY_HINT),
        (("approve", "edit"), [APPROVE_ACTION, EDIT_ACTION], APPROVE_REPLY_HINT),
        (
            ("approve", "reject", "respond"),
            [APPROVE_ACTION, REJECT_ACTION, RESPOND_ACTION],
            REPLY_HINT,
        ),
    ],
)
def test_only_the_answers_the_asker_takes_are_offered(
    allowed: tuple[str, ...] | None, shown: list[str], hint: str
) -> None:
    message = approval_message(approval(allowed_decisions=allowed))

    assert_message_valid(message, {PAUSE_ID})
    assert action_ids(blocks_of(message)) == shown
    assert blocks_of(message)[-1]["elements"][0]["text"] == hint


def test_edit_only_shows_no_reply_hint_and_needs_an_input_model() -> None:
    only_edit = approval_message(approval(allowed_decisions=("edit",)))
    nothing = approval_message(approval(allowed_decisions=("edit",), input_model=None))

    assert action_ids(blocks_of(only_edit)) == [EDIT_ACTION]
    assert "Or answer in this thread" not in all_text(blocks_of(only_edit))
    assert_message_valid(nothing, {PAUSE_ID})
    assert not any(b["type"] == "actions" for b in blocks_of(nothing))


def test_offered_follows_the_allowed_decisions_and_the_input_model() -> None:
    assert offered(None, tool_input=RefundCardInput) == Offered()
    assert offered(None, tool_input=None) == Offered(edit=False)
    assert offered(None, tool_input=None).respond is False  # only where the asker names it
    assert offered(["respond"], tool_input=None) == Offered(
        approve=False, reject=False, edit=False, respond=True
    )
    assert offered(["reject"], tool_input=RefundCardInput) == Offered(approve=False, edit=False)
    assert Offered(edit=False).allows("edit") is False
    assert Offered(reject=False).allows("reject") is False
    assert Offered(approve=False, reject=False, edit=False).allows("page") is False  # no answer


def test_the_askers_description_is_shown_escaped() -> None:
    said = "Refund requires approval <!channel> & <https://evil.example|click>\nsecond line"

    message = approval_message(approval(description=said))

    assert_message_valid(message, {PAUSE_ID})
    text = all_text(blocks_of(message))
    assert "Refund requires approval &lt;!channel&gt; &amp;" in text
    assert "second line" in text
    assert "<!channel>" not in text and "<https://" not in text


def test_a_huge_description_is_cut_within_a_section() -> None:
    message = approval_message(approval(description="&" * 50_000))

    assert_message_valid(message, {PAUSE_ID})
    sections = [b for b in blocks_of(message) if b["type"] == "section" and "text" in b]
    assert all(len(b["text"]["text"]) <= MAX_SECTION_TEXT for b in sections)
    assert any(b["text"]["text"].endswith("…") for b in sections)


def test_no_description_adds_no_block() -> None:
    assert approval_message(approval(description="  ")) == approval_message(approval())


def test_pending_items_offer_only_what_their_asker_takes() -> None:
    item = PendingItemView(
        pause_id=PAUSE_ID,
        tool="refund-card-tool",
        agent="refund-agent",
        arguments={"order_id": "7", "amount": 1, "email": "x@example.com"},
        input_model=RefundCardInput,
        owner_id="U1",
        asked_at="2026-01-01T00:00:00+00:00",
        role="refund-approvers",
        allowed_decisions=("approve", "reject"),
    )

    message = pending_list([item], page=1)

    assert_message_valid(message, {PAUSE_ID})
    assert [b for b in action_ids(blocks_of(message)) if b.endswith(":0")] == [
        f"{APPROVE_ACTION}:0",
        f"{REJECT_ACTION}:0",
    ]
    assert "x@example.com" not in json.dumps(blocks_of(message))


def test_an_answer_instead_of_the_tool_is_shown_quoted() -> None:
    said = "Already refunded <!here>"

    message = outcome_message(approval(), Responded(by="U9", response=said))

    assert_message_valid(message, {PAUSE_ID})
    text = all_text(blocks_of(message))
    assert "*Answered instead of the tool* by <@U9>" in text
    assert ">Already refunded &lt;!here&gt;" in text
    assert buttons(blocks_of(message)) == []


def test_the_respond_modal_requires_the_answer() -> None:
    view = as_json(respond_modal("sealed"))

    [block] = view["blocks"]
    assert view["callback_id"] == RESPOND_MODAL
    assert block["block_id"] == RESPONSE_BLOCK and not block.get("optional", False)
    value = {RESPONSE_BLOCK: {RESPONSE_ACTION: {"type": "plain_text_input", "value": " ok "}}}
    assert modal_response(value) == "ok"
    assert modal_response({}) is None
