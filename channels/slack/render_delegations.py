"""The App Home's delegations: who a person hands their questions to, and who hands theirs to
them (the kit's lines, ``channels.kit.delegations``), "End now" on their own, and "Hand my
questions to someone…" with its modal (a person, an end)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    DateTimePickerElement,
    DividerBlock,
    HeaderBlock,
    InputBlock,
    SectionBlock,
    UserSelectElement,
)
from slack_sdk.models.views import View

from channels.kit.delegations import DELEGATE_FIELD, UNTIL_FIELD, DelegationLine
from channels.slack.render import finish_view, mention, mrkdwn, slack_date, to_dicts

END_DELEGATION_ACTION: Final = "countersign_end_delegation"
"""An "End now" button (its value: the delegation's id)."""
START_DELEGATION_ACTION: Final = "countersign_start_delegation"
DELEGATION_MODAL: Final = "countersign_delegation_modal"
DELEGATE_BLOCK: Final = f"delegation_{DELEGATE_FIELD}"
UNTIL_BLOCK: Final = f"delegation_{UNTIL_FIELD}"
"""The modal's inputs, by the kit's field: its errors are shown under them."""
DELEGATION_BLOCKS: Final = {DELEGATE_FIELD: DELEGATE_BLOCK, UNTIL_FIELD: UNTIL_BLOCK}


def delegation_blocks(lines: Sequence[DelegationLine]) -> list[dict[str, object]]:
    """The section: each delegation on a line (with "End now" on the person's own), then the
    button that starts one."""
    blocks: list[Block] = [DividerBlock(), HeaderBlock(text="Handing your questions on")]
    for line in lines:
        said = mrkdwn(f":handshake: {line.said(mention, slack_date)}")
        end = _end_button(line.delegation.delegation_id) if line.own else None
        blocks.append(SectionBlock(text=said, accessory=end))
    start = ButtonElement(
        text="Hand my questions to someone…", action_id=START_DELEGATION_ACTION, value="start"
    )
    blocks.append(ActionsBlock(elements=[start]))
    return to_dicts(blocks, surface="home delegations")


def _end_button(delegation_id: str) -> ButtonElement:
    confirm = ConfirmObject(
        title="End it now?",
        text="Your questions come back to you alone.",
        confirm="End now",
        deny="Keep it",
    )
    return ButtonElement(
        text="End now", action_id=END_DELEGATION_ACTION, value=delegation_id, confirm=confirm
    )


def delegation_modal(*, initial_end: datetime) -> dict[str, object]:
    """Who to hand the person's questions to, and until when."""
    person = InputBlock(
        block_id=DELEGATE_BLOCK,
        label="Hand my questions to",
        element=UserSelectElement(action_id=DELEGATE_FIELD, placeholder="Choose a person"),
        hint="They may answer the questions you may answer until the end; you still may too.",
    )
    until = InputBlock(
        block_id=UNTIL_BLOCK,
        label="Until",
        element=DateTimePickerElement(
            action_id=UNTIL_FIELD, initial_date_time=int(initial_end.timestamp())
        ),
    )
    view = View(
        type="modal",
        callback_id=DELEGATION_MODAL,
        title="Hand questions on",
        submit="Hand them on",
        close="Cancel",
        blocks=[person, until],
    )
    return finish_view(view, surface="delegation modal")
