"""Block Kit pieces of a batch, for every Slack surface that lists several questions: the
``/pending`` list, the App Home, and a message per agent turn.

Each question a batch may take (``channels.kit.batches.batchable``) gets a checkbox whose one
option's value is that question's pause id sealed for the person and tenant
(``channels.slack.batch_seal``: no pause id in clear, a value changed, forged or clicked by
someone else opens nothing). Below the questions, :func:`batch_buttons`: "Approve all N"
(its value the sealed list), "Approve selected" and "Reject selected…" (what is ticked comes
with the click in the surface's ``state``: :func:`picked_values`). Ticking a checkbox is only
acknowledged; nothing is answered until a button is clicked.

Rendering is pure: sealed values in, ``slack_sdk.models`` objects out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    CheckboxesElement,
    InputBlock,
    Option,
    PlainTextInputElement,
)
from slack_sdk.models.views import View

from channels.slack.render import (
    APPROVE_ALL_ACTION,
    APPROVE_SELECTED_ACTION,
    BATCH_REJECT_MODAL,
    PICK_ACTION,
    REJECT_SELECTED_ACTION,
    RenderError,
    action_kind,
    finish_view,
)
from channels.slack.render_modal import REASON_ACTION, REASON_BLOCK

Seal = Callable[[Sequence[str]], str]
"""Seals pause ids for whom the surface is shown to (``BatchSealer.seal`` bound to the tenant
and the user of a list, or ``user=None`` for a message a conversation sees): one id for a
checkbox, the surface's ids for "Approve all"."""

PICK_TEXT: Final = "Select"
MAX_OPTION_VALUE: Final = 150
"""Block Kit's cap on an option's value; a sealed pause id takes at most 119 (86 characters
of sealed text after the longest key id, 32, and its dot)."""
SELECTED_VALUE: Final = "selected"
"""The value of "Approve selected" / "Reject selected…": what they answer is what is ticked."""


def pick_checkbox(sealed: str, *, index: int) -> CheckboxesElement:
    """The checkbox of one question (e.g. a section's accessory): ``sealed`` is its pause id
    sealed for the person (``Seal``); ``index`` keeps its action id unique on the surface.
    One element per question keeps any number of questions within Block Kit's 10 options
    per element."""
    if len(sealed) > MAX_OPTION_VALUE:
        raise RenderError(
            f"a sealed question of {len(sealed)} characters does not fit a checkbox "
            f"(at most {MAX_OPTION_VALUE})"
        )
    return CheckboxesElement(
        action_id=f"{PICK_ACTION}:{index}", options=[Option(value=sealed, text=PICK_TEXT)]
    )


def batch_buttons(
    *, approve_all: str | None = None, count: int = 0, selection: bool = True
) -> ActionsBlock | None:
    """The batch's buttons below the questions: "Approve all ``count``" when ``approve_all``
    (the sealed ids) is given, and, with ``selection``, "Approve selected" and "Reject
    selected…" (a modal asks one reason); ``None`` when there is none to show."""
    buttons: list[ButtonElement] = []
    if approve_all is not None:
        buttons.append(
            ButtonElement(
                text=f"Approve all {count}",
                action_id=APPROVE_ALL_ACTION,
                value=approve_all,
                style="primary",
            )
        )
    if selection:
        buttons.append(
            ButtonElement(
                text="Approve selected", action_id=APPROVE_SELECTED_ACTION, value=SELECTED_VALUE
            )
        )
        buttons.append(
            ButtonElement(
                text="Reject selected…",
                action_id=REJECT_SELECTED_ACTION,
                value=SELECTED_VALUE,
                style="danger",
            )
        )
    return ActionsBlock(elements=buttons) if buttons else None


def picked_values(state_values: Mapping[str, Any]) -> list[str]:
    """The sealed values ticked on a surface, from the ``state.values`` Slack sends with a
    click (by block id, then action id), in the surface's order, each once."""
    picked: list[str] = []
    for actions in state_values.values():
        if not isinstance(actions, Mapping):
            continue
        for action_id, state in actions.items():
            if action_kind(str(action_id)) != "pick" or not isinstance(state, Mapping):
                continue
            options = state.get("selected_options")
            for option in options if isinstance(options, list) else []:
                value = option.get("value") if isinstance(option, Mapping) else None
                if isinstance(value, str) and value:
                    picked.append(value)
    return list(dict.fromkeys(picked))


def batch_reject_modal(private_metadata: str, *, count: int) -> dict[str, object]:
    """The modal of "Reject selected…": one reason, required, that each of the ``count``
    questions records (the reason goes to the model); ``private_metadata`` carries the sealed
    ids and where to tell the person."""
    questions = "1 question" if count == 1 else f"{count} questions"
    reason = InputBlock(
        block_id=REASON_BLOCK,
        label="Reason",
        element=PlainTextInputElement(action_id=REASON_ACTION, multiline=True, max_length=3000),
        hint=f"Each of the {questions} is rejected with this reason.",
    )
    view = View(
        type="modal",
        callback_id=BATCH_REJECT_MODAL,
        title=f"Reject {count}"[:24],
        submit="Reject all",
        close="Cancel",
        private_metadata=private_metadata,
        blocks=[reason],
    )
    return finish_view(view, surface="batch reject modal")
