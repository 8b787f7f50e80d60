"""The App Home's settings section and its modal (installed by OAuth): where each role's
questions are asked in this workspace, and who answers them.

Every view is built with slack_sdk's models and checked by them (``finish_view``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    ConversationSelectElement,
    DividerBlock,
    HeaderBlock,
    InputBlock,
    PlainTextInputElement,
    SectionBlock,
    UserMultiSelectElement,
)
from slack_sdk.models.views import View

from channels.slack.approvers import GROUP_ID
from channels.slack.render import (
    approver_mention,
    channel_mention,
    escape,
    finish_view,
    mrkdwn,
)

CHANGE_ACTION: Final = "countersign_settings_change"
RESET_ACTION: Final = "countersign_settings_reset"
SETTINGS_MODAL: Final = "countersign_workspace_settings"
CONVERSATION_BLOCK: Final = "settings_conversation"
USERS_BLOCK: Final = "settings_users"
GROUPS_BLOCK: Final = "settings_groups"
ESCALATION_USERS_BLOCK: Final = "settings_escalation_users"
ESCALATION_GROUPS_BLOCK: Final = "settings_escalation_groups"
ESCALATION_CONVERSATION_BLOCK: Final = "settings_escalation_conversation"
VALUE_ACTION: Final = "value"

SECTION_TITLE: Final = "Approvals in this workspace"
MAY_CHANGE: Final = "You may change these: you are an admin of this workspace."
MAY_NOT_CHANGE: Final = (
    "Only an admin or owner of this workspace, or whoever installed the app, may change these."
)
REFUSED: Final = (
    "Only an admin or owner of this workspace, or whoever installed the app, may change "
    "where questions are asked and who answers them."
)
DEFAULT_MARK: Final = " _(default)_"


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingRow:
    """One role's settings as this workspace has them."""

    implementation: str
    role: str
    """What the role is, for a person ("Approves card refunds")."""
    conversation: str | None
    approvers: tuple[str, ...]
    conversation_set: bool
    """Whether this workspace set the conversation (else it is the default)."""
    approvers_set: bool
    escalates: bool = False
    """Whether its questions escalate (the code names an escalation): then who else answers
    them once escalated (``escalate_to``) and where they are asked again."""
    escalate_to: tuple[str, ...] = ()
    escalation_conversation: str | None = None
    escalation_set: bool = False


def settings_blocks(rows: Sequence[SettingRow], *, admin: bool) -> list[dict[str, object]]:
    """The section appended to the Home: a row per role, buttons for an admin."""
    blocks: list[Block] = [DividerBlock(), HeaderBlock(text=SECTION_TITLE)]
    for index, row in enumerate(rows):
        blocks.append(SectionBlock(block_id=f"settings_row:{index}", text=mrkdwn(_row_text(row))))
        if admin:
            buttons = [
                ButtonElement(text="Change", action_id=CHANGE_ACTION, value=row.implementation)
            ]
            if row.conversation_set or row.approvers_set:
                buttons.append(
                    ButtonElement(
                        text="Use the defaults", action_id=RESET_ACTION, value=row.implementation
                    )
                )
            blocks.append(ActionsBlock(block_id=f"settings_actions:{index}", elements=buttons))
    blocks.append(ContextBlock(elements=[mrkdwn(MAY_CHANGE if admin else MAY_NOT_CHANGE)]))
    checked = finish_view(View(type="home", blocks=blocks), surface="home settings")
    listed = checked.get("blocks")
    return [b for b in listed if isinstance(b, dict)] if isinstance(listed, list) else []


def _row_text(row: SettingRow) -> str:
    where = channel_mention(row.conversation) if row.conversation else "the requester's thread"
    who = ", ".join(approver_mention(a) for a in row.approvers) or "the requester"
    text = (
        f"*{escape(row.role, 150)}*\n"
        f"Asked in {where}{'' if row.conversation_set else DEFAULT_MARK}\n"
        f"Answered by {who}{'' if row.approvers_set else DEFAULT_MARK}"
    )
    if row.escalates:
        also = ", ".join(approver_mention(a) for a in row.escalate_to) or "nobody else"
        again = row.escalation_conversation
        text += f"\nOnce escalated, also by {also}" + (
            f", asked again in {channel_mention(again)}" if again else ""
        )
        text += "" if row.escalation_set else DEFAULT_MARK
    return text


def settings_modal(row: SettingRow) -> dict[str, object]:
    """The form an admin changes a role's settings in; ``private_metadata``: the
    implementation's name (the workspace is the request's own)."""
    blocks: list[Block] = [
        SectionBlock(text=mrkdwn(f"*{escape(row.role, 150)}*")),
        _conversation_input(CONVERSATION_BLOCK, "Ask in", row.conversation, optional=False),
        *_people_inputs(USERS_BLOCK, GROUPS_BLOCK, "Answered by these people", row.approvers),
    ]
    if row.escalates:
        blocks += [
            *_people_inputs(
                ESCALATION_USERS_BLOCK,
                ESCALATION_GROUPS_BLOCK,
                "Once escalated, also by these people",
                row.escalate_to,
            ),
            _conversation_input(
                ESCALATION_CONVERSATION_BLOCK,
                "Once escalated, asked again in",
                row.escalation_conversation,
                optional=True,
            ),
        ]
    view = View(
        type="modal",
        callback_id=SETTINGS_MODAL,
        title="Approval settings",
        submit="Save",
        close="Cancel",
        private_metadata=row.implementation,
        blocks=blocks,
    )
    return finish_view(view, surface="settings modal")


def _conversation_input(
    block_id: str, label: str, initial: str | None, *, optional: bool
) -> InputBlock:
    element = ConversationSelectElement(
        action_id=VALUE_ACTION, initial_conversation=initial, placeholder="A channel"
    )
    return InputBlock(block_id=block_id, label=label, optional=optional, element=element)


def _people_inputs(
    users_block: str, groups_block: str, label: str, people: tuple[str, ...]
) -> list[Block]:
    """Two inputs for people: users picked, user-group ids typed (no picker lists groups)."""
    users = [a for a in people if not GROUP_ID.fullmatch(a)]
    groups = [a for a in people if GROUP_ID.fullmatch(a)]
    return [
        InputBlock(
            block_id=users_block,
            label=label,
            optional=True,
            element=UserMultiSelectElement(
                action_id=VALUE_ACTION, initial_users=users or None, placeholder="People"
            ),
        ),
        InputBlock(
            block_id=groups_block,
            label="and the members of these user groups",
            optional=True,
            hint="User group ids (S…), separated by commas",
            element=PlainTextInputElement(
                action_id=VALUE_ACTION,
                initial_value=", ".join(groups) or None,
                placeholder="S0FINANCE",
            ),
        ),
    ]


def told_modal(text: str) -> dict[str, object]:
    """What a person sees instead of the form (they may not change the settings: ``REFUSED``)."""
    view = View(
        type="modal",
        title="Approval settings",
        close="Close",
        blocks=[SectionBlock(text=mrkdwn(text))],
    )
    return finish_view(view, surface="settings refusal")
