"""Standing grants in Block Kit: the "Approve and allow similar…" button on a question, its
modal (the kit's ``GrantOffer``: a scope, how long, up to which bound), and the grants listed
on the App Home with a Revoke button each. What is offered and every sentence are the kit's
(``channels.kit.grants``, ``channels.kit.texts``); this module only renders them.

The button's value is the pause id, as every answer button's; a Revoke button's value is the
grant's id (no pause id is on the Home's grant lines).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    InputBlock,
    Option,
    PlainTextInputElement,
    RadioButtonsElement,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from bot.core.grants import Grant
from channels.kit.grants import (
    BOUND_FIELD,
    HOURS_FIELD,
    SCOPE_FIELD,
    GrantOffer,
    grant_line,
)
from channels.kit.texts import (
    GRANT_BUTTON,
    GRANT_HOURS_LABEL,
    GRANT_MEANS,
    GRANT_SCOPE_LABEL,
    GRANT_SHORT_TITLE,
    GRANT_SUBMIT,
    GRANTS_TITLE,
    NO_GRANTS,
    REVOKE,
    grant_bound_label,
    grant_hours_option,
    more_grants,
)
from channels.kit.values import format_value
from channels.slack.render import (
    MAX_SECTION_TEXT,
    ApprovalView,
    escape,
    finish_view,
    mrkdwn,
    truncate,
)
from channels.slack.render_edit import StateValues

GRANT_ACTION: Final = "countersign_grant"
GRANT_PATTERN: Final = re.compile(rf"^{GRANT_ACTION}(?::[0-9]+)?$")
"""The grant button's action id, suffixed in a message of several questions."""
GRANT_MODAL: Final = "countersign_grant_modal"
REVOKE_GRANT_ACTION: Final = "countersign_revoke_grant"
REVOKE_GRANT_PATTERN: Final = re.compile(rf"^{REVOKE_GRANT_ACTION}(?::[0-9]+)?$")
MAX_HOME_GRANTS: Final = 20
"""Grants shown on a Home (three blocks each, within a view's 100 with the pending list)."""


def grant_button(view: ApprovalView) -> list[Block]:
    """The "Approve and allow similar…" button, where the role offers grants and the asker
    takes an approval; its value is the pause id."""
    if not view.grant_scopes or not view.offered.approve:
        return []
    button = ButtonElement(text=GRANT_BUTTON, action_id=GRANT_ACTION, value=view.pause_id)
    return [ActionsBlock(elements=[button])]


def grant_modal(offer: GrantOffer, *, title: str, private_metadata: str) -> dict[str, object]:
    """The modal of one question's grant: which similar requests, for how long, up to what."""
    options = [Option(value=c.kind, label=truncate(c.label, 75)) for c in offer.choices]
    hours = [Option(value=str(h), label=grant_hours_option(h)) for h in offer.hours]
    default_hours = hours[offer.hours.index(offer.default_hours)]
    blocks: list[Block] = [
        SectionBlock(text=mrkdwn(f"*{escape(title, 300)}*\n{escape(GRANT_MEANS, 600)}")),
        InputBlock(
            block_id=SCOPE_FIELD,
            label=GRANT_SCOPE_LABEL,
            element=RadioButtonsElement(
                action_id=SCOPE_FIELD, options=options, initial_option=options[0]
            ),
        ),
        InputBlock(
            block_id=HOURS_FIELD,
            label=GRANT_HOURS_LABEL,
            element=StaticSelectElement(
                action_id=HOURS_FIELD, options=hours, initial_option=default_hours
            ),
        ),
    ]
    if offer.bound_field is not None:
        shown = (
            None
            if offer.bound_default is None
            else format_value(None, offer.bound_field, offer.bound_default)
        )
        blocks.append(
            InputBlock(
                block_id=BOUND_FIELD,
                label=truncate(grant_bound_label(offer.bound_title), 2000),
                optional=True,
                element=PlainTextInputElement(
                    action_id=BOUND_FIELD, initial_value=shown, max_length=40
                ),
            )
        )
    view = View(
        type="modal",
        callback_id=GRANT_MODAL,
        title=GRANT_SHORT_TITLE,
        submit=GRANT_SUBMIT,
        close="Cancel",
        private_metadata=private_metadata,
        blocks=blocks,
    )
    return finish_view(view, surface="grant modal")


def grant_fields(values: StateValues) -> dict[str, str]:
    """The grant modal's three answers as the kit's form fields (missing: empty)."""
    fields: dict[str, str] = {}
    for name in (SCOPE_FIELD, HOURS_FIELD, BOUND_FIELD):
        state = values.get(name, {}).get(name, {})
        fields[name] = _chosen(state)
    return fields


def _chosen(state: Mapping[str, object]) -> str:
    selected = state.get("selected_option")
    if isinstance(selected, Mapping):
        value = selected.get("value")
        return value if isinstance(value, str) else ""
    value = state.get("value")
    return value if isinstance(value, str) else ""


def home_grant_blocks(grants: Sequence[Grant], *, notice: str | None = None) -> list[Block]:
    """The Home's grants: one line each with its Revoke button (the first ``MAX_HOME_GRANTS``
    that end soonest), or the kit's sentence when there are none; ``notice`` above them."""
    blocks: list[Block] = [DividerBlock(), HeaderBlock(text=GRANTS_TITLE)]
    if notice:
        blocks.append(SectionBlock(text=mrkdwn(escape(notice, MAX_SECTION_TEXT))))
    if not grants:
        return [*blocks, ContextBlock(elements=[mrkdwn(escape(NO_GRANTS, 300))])]
    for index, grant in enumerate(grants[:MAX_HOME_GRANTS], start=1):
        revoke = ButtonElement(
            text=REVOKE,
            action_id=f"{REVOKE_GRANT_ACTION}:{index}",  # unique in the view
            value=grant.grant_id,
            style="danger",
        )
        line = escape(grant_line(grant), MAX_SECTION_TEXT)
        blocks.append(SectionBlock(text=mrkdwn(line), accessory=revoke))
    if len(grants) > MAX_HOME_GRANTS:
        more = more_grants(len(grants) - MAX_HOME_GRANTS)
        blocks.append(ContextBlock(elements=[mrkdwn(escape(more, 300))]))
    return blocks
