"""The reject modal and the edit modal (one input per field of the tool's input model)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    InputBlock,
    InputInteractiveElement,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from channels.slack.render import (
    EDIT_MODAL,
    REJECT_MODAL,
    RESPOND_MODAL,
    ApprovalView,
    escape,
    finish_view,
    mrkdwn,
    truncate,
)
from channels.slack.render_edit import (
    VALUE_ACTION,
    EditField,
    StateValues,
    current_value,
    edit_fields,
    keeps_when_empty,
    plain,
    prefill,
    require_model,
)

REASON_BLOCK: Final = "reason"
REASON_ACTION: Final = "reason"
RESPONSE_BLOCK: Final = "response"
RESPONSE_ACTION: Final = "response"
KEEP_HIDDEN_HINT: Final = "hidden; leave empty to keep"
KEEP_LONG_HINT: Final = "too long to show here; leave empty to keep"


# --------------------------------------------------------------------------------------------
# Reject.


def reject_modal(private_metadata: str, *, reason_required: bool = False) -> dict[str, object]:
    """A modal asking for the reason, required when the role takes a rejection only with one
    (``reject_reason="required"``), else optional; ``private_metadata`` carries the caller's
    ids."""
    reason = InputBlock(
        block_id=REASON_BLOCK,
        label="Reason",
        element=PlainTextInputElement(action_id=REASON_ACTION, multiline=True, max_length=3000),
        optional=not reason_required,
        hint="This request is rejected only with a reason." if reason_required else None,
    )
    view = View(
        type="modal",
        callback_id=REJECT_MODAL,
        title="Reject",
        submit="Reject",
        close="Cancel",
        private_metadata=private_metadata,
        blocks=[reason],
    )
    return finish_view(view, surface="reject modal")


def reject_reason(state_values: StateValues) -> str | None:
    """The reason typed in the reject modal, ``None`` when left empty."""
    return _typed(state_values, REASON_BLOCK, REASON_ACTION)


def _typed(state_values: StateValues, block: str, action: str) -> str | None:
    """The text typed in one input of a modal, stripped; ``None`` when blank."""
    value = state_values.get(block, {}).get(action, {}).get("value")
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


# --------------------------------------------------------------------------------------------
# Answer instead of the tool (an attached graph's ``respond``).


def respond_modal(private_metadata: str) -> dict[str, object]:
    """A modal asking for the answer the asker reads in place of the tool's result."""
    response = InputBlock(
        block_id=RESPONSE_BLOCK,
        label="Your answer, in place of the tool's result",
        element=PlainTextInputElement(action_id=RESPONSE_ACTION, multiline=True, max_length=3000),
        hint="The tool does not run; the agent reads this instead.",
    )
    view = View(
        type="modal",
        callback_id=RESPOND_MODAL,
        title="Answer instead",
        submit="Send",
        close="Cancel",
        private_metadata=private_metadata,
        blocks=[response],
    )
    return finish_view(view, surface="respond modal")


def modal_response(state_values: StateValues) -> str | None:
    """The answer typed in the respond modal, ``None`` when blank."""
    return _typed(state_values, RESPONSE_BLOCK, RESPONSE_ACTION)


# --------------------------------------------------------------------------------------------
# Edit.


def edit_modal(view: ApprovalView, private_metadata: str) -> dict[str, object]:
    """A modal over the tool's input model, prefilled with the current arguments.

    Sensitive fields are never prefilled. Read the submission back with
    ``render_edit.validate_edit_submission``.
    """
    fields = edit_fields(require_model(view))
    intro = SectionBlock(
        text=mrkdwn(f"*{escape(view.title, 300)}*\nChange what needs changing, then approve.")
    )
    inputs: list[Block] = [_input(field, view.arguments) for field in fields]
    if not inputs:
        inputs = [ContextBlock(elements=[mrkdwn("_This tool takes no arguments._")])]
    modal = View(
        type="modal",
        callback_id=EDIT_MODAL,
        title="Edit & approve",
        submit="Approve",
        close="Cancel",
        private_metadata=private_metadata,
        blocks=[intro, *inputs],
    )
    return finish_view(modal, surface=f"edit modal of {truncate(view.tool, 100)}")


def _input(field: EditField, arguments: Mapping[str, Any]) -> InputBlock:
    keeps = keeps_when_empty(field, arguments)
    hint = field.description
    if keeps:
        hint = KEEP_HIDDEN_HINT if field.sensitive else KEEP_LONG_HINT
    label = f"{field.title} (JSON)" if field.kind == "json" else field.title
    return InputBlock(
        block_id=field.key,
        label=truncate(label, 2000),
        element=_element(field, current_value(field, arguments)),
        hint=truncate(hint, 2000) if hint else None,
        optional=keeps or not field.required,
    )


def _element(field: EditField, current: object) -> InputInteractiveElement:
    initial = prefill(field, current)
    match field.kind:
        case "int" | "float":
            return NumberInputElement(
                action_id=VALUE_ACTION,
                is_decimal_allowed=field.kind == "float",
                initial_value=initial,
            )
        case "bool":
            return _select((True, False), ("Yes", "No"), current)
        case "choice":
            labels = [str(choice) for choice in field.choices]
            return _select(field.choices, labels, current)
        case "text" | "json":
            multiline = field.kind == "json" or _is_long(initial)
            return PlainTextInputElement(
                action_id=VALUE_ACTION, initial_value=initial, multiline=multiline
            )


def _select(
    choices: Sequence[object], labels: Sequence[str], current: object
) -> StaticSelectElement:
    """A static select whose option values are indexes, so any literal round-trips."""
    options = [
        Option(text=truncate(label, 75), value=str(index)) for index, label in enumerate(labels)
    ]
    wanted = plain(current)
    initial = next(
        (
            option
            for option, choice in zip(options, choices, strict=True)
            if type(choice) is type(wanted) and choice == wanted
        ),
        None,
    )
    return StaticSelectElement(action_id=VALUE_ACTION, options=options, initial_option=initial)


def _is_long(text: str | None) -> bool:
    return text is not None and ("\n" in text or len(text) > 80)
