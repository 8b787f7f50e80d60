"""One message for the questions one model turn asked together (``channels.slack.turn_messages``):
each item with its own arguments, context and buttons, or its outcome once settled; "Approve all"
and "Reject all…" (one reason, asked by a modal) over the items still waiting that a batch may
take. Pure: views in, Block Kit out, checked like
every message.

An item offers what the question posted alone offers, in one actions block (six elements at
most, of Slack's 25: no block more than an item without them): its answers
(``render.approval_buttons``), "Approve and allow similar…" where the kit's grant offer says so
(``TurnItem.grant``), and "Reassign…" for a CHANNEL question; each carries the item's value (the
pause id and the proposal shown) and an action id suffixed with its place, unique in the message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    InteractiveElement,
    SectionBlock,
)

from channels.kit.batches import batchable
from channels.kit.outcomes import Outcome
from channels.kit.question import asker_said
from channels.kit.texts import GRANT_BUTTON
from channels.slack.button_values import answer_value
from channels.slack.render import (
    MAX_FIELDS,
    MAX_HEADER_TEXT,
    MAX_SECTION_TEXT,
    ApprovalView,
    RenderedMessage,
    approval_buttons,
    argument_fields,
    escape,
    field_sections,
    finish_message,
    mention,
    mrkdwn,
    truncate,
)
from channels.slack.render_approvals import reassign_menu
from channels.slack.render_grants import GRANT_ACTION
from channels.slack.render_message import context_line, expiry_line, outcome_line

MAX_TURN_ITEMS: Final = 8
"""Items one message lists: five blocks each at most (divider, title, fields, context,
buttons or outcome) and six around them stay within Slack's 50 blocks; a turn that asks more
asks the rest in messages of their own."""
TURN_APPROVE_ALL: Final = "countersign_turn_approve"
"""The action id of a turn message's "Approve all" (its value seals the items it approves)."""
TURN_REJECT_ALL: Final = "countersign_turn_reject"
"""The action id of its "Reject all…": the same sealed value, the items its modal rejects."""
ONE_BY_ONE: Final = (
    "Answer each request with its own buttons: a reply in this thread cannot tell which "
    "request it answers."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnItem:
    """One question of the turn as it stands: its view, and its outcome once settled."""

    view: ApprovalView
    outcome: Outcome | None = None
    grant: bool = False
    """It offers "Approve and allow similar…": the kit's grant offer for its pause says so
    (``channels.kit.grants.grant_offer``: never where it needs several approvals)."""


def approvable(items: Sequence[TurnItem]) -> list[str]:
    """The pause ids "Approve all" approves (and "Reject all…" rejects): the items still
    waiting that a batch may take."""
    return [i.view.pause_id for i in items if i.outcome is None and batchable(i.view.offered)]


def turn_message(items: Sequence[TurnItem], *, approve_all: str | None) -> RenderedMessage:
    """The turn's message; ``approve_all``: the sealed value of its "Approve all" and "Reject
    all…" buttons, shown while two or more items may take them."""
    first = items[0].view
    waiting = [item for item in items if item.outcome is None]
    blocks: list[Block] = [
        HeaderBlock(text=truncate(_heading(len(items), len(waiting)), MAX_HEADER_TEXT)),
        ContextBlock(elements=[mrkdwn(_asked_by(first))]),
    ]
    for index, item in enumerate(items, start=1):
        blocks += _item(index, item)
    if approve_all is not None and len(approvable(items)) > 1:
        count = len(approvable(items))
        buttons = [
            ButtonElement(
                text=f"Approve all {count}", action_id=TURN_APPROVE_ALL, value=approve_all
            ),
            ButtonElement(
                text=f"Reject all {count}…", action_id=TURN_REJECT_ALL, value=approve_all
            ),
        ]
        blocks += [DividerBlock(), ActionsBlock(elements=buttons)]
    if waiting:
        notes = [ONE_BY_ONE]
        ends = [i.view.expires_at for i in waiting if i.view.expires_at is not None]
        if ends:
            notes.append(expiry_line(min(ends)))
        blocks.append(ContextBlock(elements=[mrkdwn(n) for n in notes]))
    text = (
        _heading(len(items), len(waiting))
        + ": "
        + "; ".join(escape(item.view.title, 120) for item in items)
    )
    return finish_message(text=text, blocks=blocks, surface="turn message")


def _heading(count: int, waiting: int) -> str:
    if waiting == 0:
        return f"{count} requests, none waiting any more"
    if waiting == count:
        return f"Approval needed: {count} requests"
    return f"Approval needed: {waiting} of {count} requests still wait"


def _asked_by(view: ApprovalView) -> str:
    return " · ".join(
        (
            f"Asked together by {mention(view.owner_id)} through {escape(view.agent, 200)}",
            escape(view.role_label, 300),
        )
    )


def _item(index: int, item: TurnItem) -> list[Block]:
    """One item: its title and what the asker says, its arguments, its context, then its own
    buttons while it waits, else its outcome."""
    view = item.view
    head = f"*{index}. {escape(view.title, 300)}*"
    said = asker_said(view.description)
    if said:
        head += "\n" + escape(said, 1000)
    blocks: list[Block] = [
        DividerBlock(),
        SectionBlock(text=mrkdwn(truncate(head, MAX_SECTION_TEXT))),
    ]
    fields = argument_fields(view.input_model, view.arguments, max_value=400)
    blocks += field_sections(fields, max_fields=MAX_FIELDS) if fields else []
    notes = [n for n in (context_line(view.request, view.stated_reason), *view.approvals) if n]
    if notes and item.outcome is None:
        blocks.append(ContextBlock(elements=[mrkdwn(n) for n in notes[:10]]))
    if item.outcome is None:
        blocks += _item_actions(index, item)
    else:
        blocks.append(SectionBlock(text=mrkdwn(outcome_line(view, item.outcome))))
    return blocks


def _item_actions(index: int, item: TurnItem) -> list[Block]:
    """A waiting item's one actions block: its answers, then "Approve and allow similar…" and
    "Reassign…" where it offers them, as the question alone would."""
    view, suffix = item.view, str(index)
    answers = approval_buttons(
        view.pause_id, offers=view.offered, shown_round=view.shown_round, suffix=suffix
    )
    elements = [e for b in answers for e in b.elements if isinstance(e, InteractiveElement)]
    value = answer_value(view.pause_id, view.shown_round)
    if item.grant and view.offered.approve:
        grant = ButtonElement(text=GRANT_BUTTON, action_id=f"{GRANT_ACTION}:{suffix}", value=value)
        elements.append(grant)
    if view.reassignable:
        elements.append(reassign_menu(value, suffix=suffix))
    return [ActionsBlock(elements=elements)] if elements else []
