"""The approval message's lines about a question that needs several approvals: who approved,
who changed the proposal, how many more are needed (the kit's lines, with Slack mentions)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ContextBlock,
    InputBlock,
    Option,
    OverflowMenuElement,
    UserSelectElement,
)
from slack_sdk.models.views import View

from channels.slack.render import MAX_SECTION_TEXT, finish_view, mrkdwn, truncate

REASSIGN_ACTION: Final = "countersign_reassign"
"""The Reassign button's action id (its value: the pause id, as every button's)."""
REASSIGN_PATTERN: Final = re.compile(rf"^{REASSIGN_ACTION}(?::[0-9]+)?$")
"""Its action id, suffixed in a message of several questions (``countersign_reassign:3``)."""
REASSIGN_MODAL: Final = "countersign_reassign_modal"
REASSIGN_BLOCK: Final = "reassign_to"
REASSIGN_USER: Final = "to"


def approvals_blocks(lines: Sequence[str]) -> list[Block]:
    """One context line for them (none for a question one answer closes)."""
    if not lines:
        return []
    text = truncate(" · ".join(lines), MAX_SECTION_TEXT)
    return [ContextBlock(elements=[mrkdwn(f":busts_in_silhouette: {text}")])]


def reassign_blocks(pause_id: str) -> list[Block]:
    """ "Reassign…" in a menu under the answers (a CHANNEL question: someone else may answer),
    apart from the answer buttons: handing on is no answer. Its option's value is the pause
    id, as a button's is."""
    return [ActionsBlock(block_id="countersign_handing", elements=[reassign_menu(pause_id)])]


def reassign_menu(value: str, *, suffix: str | None = None) -> OverflowMenuElement:
    """The "Reassign…" menu; ``value``: the question's, as its buttons carry it; ``suffix``
    keeps its action id unique in a message of several questions."""
    action_id = REASSIGN_ACTION if suffix is None else f"{REASSIGN_ACTION}:{suffix}"
    return OverflowMenuElement(action_id=action_id, options=[Option(text="Reassign…", value=value)])


def reassign_modal(private_metadata: str) -> dict[str, object]:
    """Who to hand the question to: one person of the workspace (never the requester)."""
    person = InputBlock(
        block_id=REASSIGN_BLOCK,
        label="Hand it to",
        element=UserSelectElement(action_id=REASSIGN_USER, placeholder="Choose a person"),
        hint="They may answer it from now on, and are told; you still may too.",
    )
    view = View(
        type="modal",
        callback_id=REASSIGN_MODAL,
        title="Reassign",
        submit="Reassign",
        close="Cancel",
        private_metadata=private_metadata,
        blocks=[person],
    )
    return finish_view(view, surface="reassign modal")
