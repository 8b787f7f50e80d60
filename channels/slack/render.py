"""Block Kit vocabulary shared by the approval message, the modals and the pending list.

Rendering is pure: small frozen view models in, Block Kit dicts out, no Slack call. Blocks are
built with ``slack_sdk.models`` so that Slack's per-element limits are checked when they become
dicts; :func:`check_blocks` adds the limits slack_sdk does not check (blocks per surface, unique
ids, field sizes). The pause id is the right to answer: it goes into button values and nowhere
else (not in text, block ids, action ids or fallback text).

The surfaces themselves live in ``render_message`` (approval and outcome messages),
``render_modal`` (reject and edit modals, edit submissions) and ``render_pending`` (``/pending``
and App Home).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import BaseModel
from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    MarkdownTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.core.errors import UsageError
from bot.core.sensitive import mask_arguments
from channels.kit.offers import Offered, offered
from channels.kit.question import question_title
from channels.kit.values import field_title, format_value
from channels.slack.button_values import answer_value

# --------------------------------------------------------------------------------------------
# Ids the listeners match on.

APPROVE_ACTION: Final = "countersign_approve"
REJECT_ACTION: Final = "countersign_reject"
EDIT_ACTION: Final = "countersign_edit"
RESPOND_ACTION: Final = "countersign_respond"
PENDING_PAGE_ACTION: Final = "countersign_pending_page"
APPROVE_ALL_ACTION: Final = "countersign_batch_approve"
APPROVE_SELECTED_ACTION: Final = "countersign_batch_approve_selected"
REJECT_SELECTED_ACTION: Final = "countersign_batch_reject_selected"
PICK_ACTION: Final = "countersign_batch_pick"
"""A question's checkbox in a list: ticking it only selects (acknowledged, nothing else)."""
BATCH_REJECT_MODAL: Final = "countersign_batch_reject_modal"
REJECT_MODAL: Final = "countersign_reject_modal"
EDIT_MODAL: Final = "countersign_edit_modal"
RESPOND_MODAL: Final = "countersign_respond_modal"

ActionKind = Literal[
    "approve",
    "reject",
    "edit",
    "respond",
    "page",
    "batch",
    "batch-selected",
    "batch-reject",
    "pick",
]

_KINDS: Final[Mapping[str, ActionKind]] = {
    APPROVE_ACTION: "approve",
    REJECT_ACTION: "reject",
    EDIT_ACTION: "edit",
    RESPOND_ACTION: "respond",
    PENDING_PAGE_ACTION: "page",
    APPROVE_ALL_ACTION: "batch",
    APPROVE_SELECTED_ACTION: "batch-selected",
    REJECT_SELECTED_ACTION: "batch-reject",
    PICK_ACTION: "pick",
}

ACTION_ID_PATTERN: Final = re.compile(
    "^(?:" + "|".join(re.escape(base) for base in _KINDS) + r")(?::[A-Za-z0-9_-]+)?$"
)
"""Matches every action id we render (``countersign_approve``, ``countersign_approve:3``, ...);
register one Bolt listener with it and branch on :func:`action_kind`."""


def action_kind(action_id: str) -> ActionKind | None:
    """What a clicked ``action_id`` asks for; ``None`` when it is not one of ours.

    A message holding several requests (``/pending``) suffixes its action ids (``:3``) to keep
    them unique; the suffix carries no meaning, the button's value names the pause.
    """
    if ACTION_ID_PATTERN.fullmatch(action_id) is None:
        return None
    return _KINDS.get(action_id.partition(":")[0])


# --------------------------------------------------------------------------------------------
# Limits (https://docs.slack.dev/reference/block-kit/blocks, .../views/modal-views).

MAX_MESSAGE_BLOCKS: Final = 50
MAX_VIEW_BLOCKS: Final = 100
MAX_SECTION_TEXT: Final = 3000
MAX_FIELD_TEXT: Final = 2000
MAX_FIELDS: Final = 10
MAX_HEADER_TEXT: Final = 150
MAX_BUTTON_VALUE: Final = 2000
MAX_PRIVATE_METADATA: Final = 3000
MAX_FALLBACK_TEXT: Final = 3000
ELLIPSIS: Final = "…"


class RenderError(UsageError):
    """Something cannot be shown in Slack within Block Kit's limits, even after truncation."""

    code = "slack.render"


# --------------------------------------------------------------------------------------------
# View models.


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalView:
    """What an approval message shows about one pause.

    ``arguments`` may be masked already or not: every renderer masks them again. For the edit
    modal flow pass the real values: an empty sensitive input keeps the original value.
    """

    pause_id: str
    tool: str
    tool_description: str
    arguments: Mapping[str, Any]
    input_model: type[BaseModel] | None
    agent: str
    owner_id: str
    role: str
    role_description: str = ""
    reads_replies: bool = True
    separates_duties: bool = False  # the requester may not approve
    expires_at: datetime | None = None  # when nobody answering ends it
    description: str | None = None  # what the asker says about this call (an attached graph's)
    allowed_decisions: tuple[str, ...] | None = None  # the answers the asker takes; None: all
    request: str | None = None  # what the requester asked, in their words (masked)
    stated_reason: str | None = None  # the agent's words before the call (masked)
    question: str | None = None  # the tool's or role's ``question=`` template
    tool_result: str | None = None  # what the tool returned, once it ran after the answer
    grant_scopes: tuple[str, ...] = ()  # the grants its approver may give (channels.kit.grants)
    approvals: tuple[str, ...] = ()  # who approved, how many more (mrkdwn lines; several needed)
    reassignable: bool = False  # a CHANNEL question: it may be handed to someone (Reassign)
    shown_round: int | None = None  # the proposal shown, carried by its buttons (several needed)

    @property
    def offered(self) -> Offered:
        """The buttons the message offers: only the answers the asker takes."""
        return offered(self.allowed_decisions, tool_input=self.input_model)

    @property
    def title(self) -> str:
        """What is asked, for a person (``channels.kit.question.question_title``): the
        question template filled in, else the description's first line."""
        return question_title(
            self.question,
            model=self.input_model,
            arguments=self.arguments,
            description=self.tool_description,
            tool=self.tool,
        )

    @property
    def role_label(self) -> str:
        """Who answers, for a person: the role's description, else its name."""
        return " ".join(self.role_description.split()) or self.role


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderedMessage:
    """A message ready for ``chat.postMessage`` / ``chat.update``: fallback text and blocks."""

    text: str
    blocks: list[dict[str, object]]


# --------------------------------------------------------------------------------------------
# Text.

_ESCAPES: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_USER_ID: Final = re.compile(r"[UW][A-Z0-9]{1,40}")
_CHANNEL_ID: Final = re.compile(r"[CG][A-Z0-9]{1,40}")


def truncate(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending with "…" when it was cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + ELLIPSIS


def escape(text: str, limit: int) -> str:
    """``text`` escaped for mrkdwn (``&``, ``<``, ``>``) and cut to ``limit`` characters.

    Escaping keeps outside text from pinging (``<!channel>``) or linking; the cut never splits
    an entity such as ``&amp;``.
    """
    # Escaping only grows text, so this prefix decides whether it fits.
    head = text[: limit + 1]
    escaped = "".join(_ESCAPES.get(char, char) for char in head)
    if len(head) == len(text) and len(escaped) <= limit:
        return escaped
    pieces: list[str] = []
    size = 0
    for char in head:
        piece = _ESCAPES.get(char, char)
        if size + len(piece) > limit - 1:
            break
        pieces.append(piece)
        size += len(piece)
    return "".join(pieces) + ELLIPSIS


def request_title(tool: str, description: str) -> str:
    """A request's title without a template (``channels.kit.question.question_title``)."""
    return question_title(None, model=None, arguments={}, description=description, tool=tool)


def mention(user_id: str) -> str:
    """A mention of a Slack user, or the escaped id when it does not look like one."""
    if _USER_ID.fullmatch(user_id):
        return f"<@{user_id}>"
    return escape(user_id, 60)


def approver_mention(approver: str) -> str:
    """A mention of an approver: a user (``<@U…>``) or a user group (``<!subteam^S…>``)."""
    if approver.startswith("S") and approver[1:].isalnum():
        return f"<!subteam^{approver}>"
    return mention(approver)


def slack_date(moment: datetime) -> str:
    """``moment`` as Slack shows a date in each reader's time zone, with a UTC fallback."""
    fallback = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(moment.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


def channel_mention(conversation: str) -> str:
    """A link to a channel (``<#C123>``); a direct message or anything else is named in words."""
    if _CHANNEL_ID.fullmatch(conversation):
        return f"<#{conversation}>"
    return "a direct message" if conversation.startswith("D") else escape(conversation, 60)


def mrkdwn(text: str) -> MarkdownTextObject:
    """Verbatim mrkdwn: Slack does not auto-link names or mentions found in outside text."""
    return MarkdownTextObject(text=text, verbatim=True)


# --------------------------------------------------------------------------------------------
# Arguments and buttons.


def argument_fields(
    model: type[BaseModel] | None,
    arguments: Mapping[str, Any],
    *,
    max_value: int = MAX_FIELD_TEXT,
) -> list[str]:
    """One ``*Title*\\nvalue`` field per argument, written for a person (``render_values``):
    sensitive ones masked, long values cut."""
    shown = mask_arguments(model, arguments)
    return [_field_text(model, name, value, max_value) for name, value in shown.items()]


def _field_text(model: type[BaseModel] | None, name: str, value: Any, max_value: int) -> str:
    label = f"*{escape(field_title(model, name), 150)}*\n"
    text = format_value(model, name, value)
    return label + escape(text, min(max_value, MAX_FIELD_TEXT - len(label)))


def argument_summary(
    model: type[BaseModel] | None, arguments: Mapping[str, Any], *, limit: int
) -> str:
    """The arguments on one line, ``Title: value · ...`` (mrkdwn, escaped, masked), cut at
    ``limit`` characters: enough for a requester to tell their requests apart."""
    shown = mask_arguments(model, arguments)
    parts = [
        f"{field_title(model, name)}: {' '.join(format_value(model, name, value).split())}"
        for name, value in shown.items()
    ]
    return escape(" · ".join(parts), limit)


def capped(fields: Sequence[str], *, max_fields: int) -> list[str]:
    """At most ``max_fields`` fields; when some are left out, the last one says how many."""
    if len(fields) <= max_fields:
        return list(fields)
    hidden = len(fields) - (max_fields - 1)
    return [*fields[: max_fields - 1], f"_{ELLIPSIS}and {hidden} more_"]


def field_sections(fields: Sequence[str], *, max_fields: int) -> list[SectionBlock]:
    """Sections of at most 10 fields, ``max_fields`` in all (see :func:`capped`)."""
    fields = capped(fields, max_fields=max_fields)
    return [
        SectionBlock(fields=[mrkdwn(field) for field in fields[start : start + MAX_FIELDS]])
        for start in range(0, len(fields), MAX_FIELDS)
    ]


def approval_buttons(
    pause_id: str, *, offers: Offered, shown_round: int | None, suffix: str | None = None
) -> list[ActionsBlock]:
    """Approve / Reject / Edit & approve / Answer instead, those ``offers`` holds (no block
    when none is); each value is the pause id with the proposal shown (``shown_round``,
    ``channels.slack.button_values``), no id or text holds it."""
    value = answer_value(pause_id, shown_round)

    def action_id(base: str) -> str:
        return base if suffix is None else f"{base}:{suffix}"

    buttons: list[ButtonElement] = []
    if offers.approve:
        buttons.append(
            ButtonElement(
                text="Approve", action_id=action_id(APPROVE_ACTION), value=value, style="primary"
            )
        )
    if offers.reject:
        buttons.append(
            ButtonElement(
                text="Reject", action_id=action_id(REJECT_ACTION), value=value, style="danger"
            )
        )
    if offers.edit:
        buttons.append(
            ButtonElement(text="Edit & approve", action_id=action_id(EDIT_ACTION), value=value)
        )
    if offers.respond:
        buttons.append(
            ButtonElement(text="Answer instead", action_id=action_id(RESPOND_ACTION), value=value)
        )
    return [ActionsBlock(elements=buttons)] if buttons else []


# --------------------------------------------------------------------------------------------
# Validation.


def to_dicts(blocks: Sequence[Block], *, surface: str) -> list[dict[str, object]]:
    """The blocks as dicts; slack_sdk validates each element's limits on the way."""
    try:
        return [block.to_dict() for block in blocks]
    except SlackObjectFormationError as error:
        raise RenderError(f"the {surface} breaks a Block Kit limit: {error}") from error


def check_blocks(blocks: Sequence[Mapping[str, object]], *, max_blocks: int, surface: str) -> None:
    """The limits slack_sdk does not check: block count, unique ids, section and field sizes."""
    problems = [
        *_count_problems(blocks, max_blocks),
        *_id_problems(blocks),
        *(problem for block in blocks for problem in _size_problems(block)),
    ]
    if problems:
        raise RenderError(f"the {surface} breaks Block Kit limits: {'; '.join(problems)}")


def finish_message(*, text: str, blocks: Sequence[Block], surface: str) -> RenderedMessage:
    dicts = to_dicts(blocks, surface=surface)
    check_blocks(dicts, max_blocks=MAX_MESSAGE_BLOCKS, surface=surface)
    return RenderedMessage(text=truncate(text, MAX_FALLBACK_TEXT), blocks=dicts)


def finish_view(view: View, *, surface: str) -> dict[str, object]:
    """The view as a dict, validated by slack_sdk and :func:`check_blocks` (100 blocks)."""
    metadata = view.private_metadata
    if metadata is not None and len(metadata) > MAX_PRIVATE_METADATA:
        raise RenderError(
            f"the {surface}'s private_metadata has {len(metadata)} characters, "
            f"at most {MAX_PRIVATE_METADATA} allowed: keep only ids in it"
        )
    try:
        rendered: dict[str, object] = view.to_dict()
    except SlackObjectFormationError as error:
        raise RenderError(f"the {surface} breaks a Block Kit limit: {error}") from error
    blocks = rendered.get("blocks")
    check_blocks(
        blocks if isinstance(blocks, list) else [],
        max_blocks=MAX_VIEW_BLOCKS,
        surface=surface,
    )
    return rendered


def _count_problems(blocks: Sequence[Mapping[str, object]], max_blocks: int) -> Iterator[str]:
    if len(blocks) > max_blocks:
        yield f"{len(blocks)} blocks, at most {max_blocks} allowed"


def _id_problems(blocks: Sequence[Mapping[str, object]]) -> Iterator[str]:
    """Duplicate block ids, and action ids that are not unique.

    Slack keys interactions and view state by (block_id, action_id), so an input's action id
    only has to be unique within its block. Our messages set no block ids: there, an action id
    must be unique in the whole message, which is what the listeners match on.
    """
    block_ids = [str(block["block_id"]) for block in blocks if "block_id" in block]
    action_keys = [
        f"{block.get('block_id', '')}/{node['action_id']}"
        for block in blocks
        for node in _nodes(block)
        if "action_id" in node
    ]
    for kind, ids in (("block_id", block_ids), ("action_id", action_keys)):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            yield f"duplicate {kind}s {duplicates}"


def _size_problems(block: Mapping[str, object]) -> Iterator[str]:
    kind = block.get("type")
    text = _text_of(block.get("text"))
    if kind == "section":
        fields = block.get("fields")
        field_texts = [_text_of(f) for f in fields] if isinstance(fields, list) else []
        if len(text) > MAX_SECTION_TEXT:
            yield f"section text of {len(text)} characters (max {MAX_SECTION_TEXT})"
        if len(field_texts) > MAX_FIELDS:
            yield f"section with {len(field_texts)} fields (max {MAX_FIELDS})"
        if any(len(t) > MAX_FIELD_TEXT for t in field_texts):
            yield f"section field over {MAX_FIELD_TEXT} characters"
    if kind == "header" and len(text) > MAX_HEADER_TEXT:
        yield f"header of {len(text)} characters (max {MAX_HEADER_TEXT})"
    for node in _nodes([block]):
        value = node.get("value")
        if (
            node.get("type") == "button"
            and isinstance(value, str)
            and len(value) > MAX_BUTTON_VALUE
        ):
            yield f"button value over {MAX_BUTTON_VALUE} characters"


def _text_of(obj: object) -> str:
    if isinstance(obj, Mapping):
        text = obj.get("text")
        return text if isinstance(text, str) else ""
    return ""


def _nodes(obj: object) -> Iterator[Mapping[str, object]]:
    """Every dict nested in ``obj`` (blocks, elements, options...), depth first."""
    if isinstance(obj, Mapping):
        yield obj
        for value in obj.values():
            yield from _nodes(value)
    elif isinstance(obj, list | tuple):
        for item in obj:
            yield from _nodes(item)
