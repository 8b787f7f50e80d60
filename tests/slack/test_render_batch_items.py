"""The shared batch pieces (``channels.slack.render_batch_items``): a checkbox per question
whose value is its sealed pause id, the batch's buttons, and what a click's state ticked."""

from __future__ import annotations

import pytest
from slack_sdk.models.blocks import Block, SectionBlock

from bot.security.derived import DerivedKeys
from bot.security.keys import KeyRing, generate_key
from channels.slack.batch_seal import BatchSealer
from channels.slack.render import (
    APPROVE_ALL_ACTION,
    APPROVE_SELECTED_ACTION,
    PICK_ACTION,
    REJECT_SELECTED_ACTION,
    RenderError,
    action_kind,
    finish_message,
)
from channels.slack.render_batch_items import (
    MAX_OPTION_VALUE,
    batch_buttons,
    pick_checkbox,
    picked_values,
)

PAUSE_ID = "a" * 32  # as long as a real one (secrets.token_hex(16))


def _sealer() -> BatchSealer:
    return BatchSealer(DerivedKeys(KeyRing([generate_key("k" * 32)])))


def test_a_sealed_question_fits_a_checkbox_and_opens_for_its_person_only() -> None:
    sealer = _sealer()
    sealed = sealer.seal([PAUSE_ID], user="U1", tenant_id="T1")
    box = pick_checkbox(sealed, index=3)
    rendered = finish_message(
        text="t", blocks=[SectionBlock(text="q", accessory=box)], surface="test"
    )
    [block] = rendered.blocks
    assert Block.parse(block) is not None
    assert PAUSE_ID not in str(block) and len(sealed) <= MAX_OPTION_VALUE
    assert action_kind(f"{PICK_ACTION}:3") == "pick"
    assert sealer.open(sealed, user="U1", tenant_id="T1") == [PAUSE_ID]
    assert sealer.open(sealed, user="U2", tenant_id="T1") is None


def test_a_value_too_long_for_a_checkbox_is_refused() -> None:
    with pytest.raises(RenderError):
        pick_checkbox("x" * (MAX_OPTION_VALUE + 1), index=0)


def test_the_batch_buttons() -> None:
    block = batch_buttons(approve_all="sealed", count=4)
    assert block is not None
    ids = [e["action_id"] for e in block.to_dict()["elements"]]
    assert ids == [APPROVE_ALL_ACTION, APPROVE_SELECTED_ACTION, REJECT_SELECTED_ACTION]
    assert [action_kind(i) for i in ids] == ["batch", "batch-selected", "batch-reject"]
    assert batch_buttons(selection=False) is None


def test_what_was_ticked_is_read_from_the_state_each_once() -> None:
    state = {
        "b1": {f"{PICK_ACTION}:0": {"type": "checkboxes", "selected_options": [{"value": "a"}]}},
        "b2": {f"{PICK_ACTION}:1": {"type": "checkboxes", "selected_options": []}},
        "b3": {f"{PICK_ACTION}:2": {"type": "checkboxes", "selected_options": [{"value": "c"}]}},
        "b4": {"other": {"type": "checkboxes", "selected_options": [{"value": "x"}]}},
        "b5": {f"{PICK_ACTION}:4": {"type": "checkboxes", "selected_options": [{"value": "a"}]}},
        "b6": "junk",
    }
    assert picked_values(state) == ["a", "c"]


def test_a_value_sealed_for_anyone_of_a_tenant_opens_for_each_of_its_people_only() -> None:
    sealer = _sealer()
    sealed = sealer.seal([PAUSE_ID], user=None, tenant_id="T1")  # a conversation's message
    assert sealer.open(sealed, user="U1", tenant_id="T1") == [PAUSE_ID]
    assert sealer.open(sealed, user="U2", tenant_id="T1") == [PAUSE_ID]
    assert sealer.open(sealed, user="U1", tenant_id="T2") is None
    assert len(sealed) <= MAX_OPTION_VALUE
