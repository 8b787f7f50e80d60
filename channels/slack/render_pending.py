"""The list of pauses a user may answer: ``/pending`` (an ephemeral message) and the App Home."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from pydantic import BaseModel
from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.core.time_left import expiring_first, parse_instant, time_left_text
from channels.kit.batches import batchable
from channels.kit.offers import Offered, offered
from channels.kit.question import question_title
from channels.kit.texts import NOT_YET_DELIVERED, NOTHING_WAITS
from channels.slack.button_values import answer_value
from channels.slack.render import (
    MAX_FIELDS,
    MAX_SECTION_TEXT,
    PENDING_PAGE_ACTION,
    RenderedMessage,
    RenderError,
    approval_buttons,
    argument_fields,
    capped,
    escape,
    finish_message,
    finish_view,
    mention,
    mrkdwn,
    truncate,
)
from channels.slack.render_batch_items import Seal, batch_buttons, pick_checkbox

EMPTY_LIST: Final = NOTHING_WAITS
"""The kit's sentence for an empty list, as the web's inbox says it."""
PREVIOUS_PAGE_ACTION: Final = f"{PENDING_PAGE_ACTION}:previous"
NEXT_PAGE_ACTION: Final = f"{PENDING_PAGE_ACTION}:next"

_MAX_VALUE: Final = 300  # per argument: ten requests per page must stay a readable message


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingItemView:
    """One pause in the list; ``arguments`` are masked again when shown."""

    pause_id: str
    tool: str
    agent: str
    arguments: Mapping[str, Any]
    input_model: type[BaseModel] | None
    owner_id: str
    asked_at: str  # ISO 8601
    role: str
    tool_description: str = ""
    role_description: str = ""
    expires_at: str | None = None  # ISO 8601; None if it never expires
    time_left: timedelta | None = None  # until it expires, when it does
    allowed_decisions: tuple[str, ...] | None = None  # the answers the asker takes; None: all
    question: str | None = None  # the tool's or role's ``question=`` template
    delivered: bool = True  # False: its channel could not be given it yet (an outage)
    shown_round: int | None = None  # the proposal listed, carried by its buttons (several needed)
    handed: str | None = None  # why a delegate is asked it (mrkdwn: ``channels.kit.waiting``)


def pending_list(
    items: Sequence[PendingItemView], *, page: int, page_size: int = 10, seal: Seal | None = None
) -> RenderedMessage:
    """The ephemeral ``/pending`` answer: what expires first at the top, then the rest newest
    first (``listed_order``), ``page_size`` per page (1-based pages).

    A page past the end shows the last one: requests may have been answered meanwhile. With
    ``seal``, on a page of two or more questions a batch may take each of them has a checkbox,
    and the page ends with "Approve all" for them, "Approve selected" and "Reject selected…"
    (``channels.slack.render_batch_items``).
    """
    blocks = _list_blocks(items, page=page, page_size=page_size, seal=seal)
    text = f"{len(items)} waiting for your answer" if items else EMPTY_LIST
    return finish_message(text=text, blocks=blocks, surface="pending list")


def home_view(
    items: Sequence[PendingItemView],
    *,
    page: int,
    page_size: int = 10,
    extra: Sequence[Block] = (),
    seal: Seal | None = None,
    said: str | None = None,
) -> dict[str, object]:
    """The same list as an App Home (``views.publish``) view, ``extra`` blocks below it;
    ``said`` (what the person's last batch did, mrkdwn lines) above it."""
    above: list[Block] = [] if not said else [_said_block(said)]
    blocks = [*above, *_list_blocks(items, page=page, page_size=page_size, seal=seal), *extra]
    return finish_view(View(type="home", blocks=blocks), surface="home view")


def _said_block(said: str) -> SectionBlock:
    return SectionBlock(text=mrkdwn(truncate(f"*Your last batch*\n{said}", MAX_SECTION_TEXT)))


def page_count(total: int, *, page_size: int = 10) -> int:
    """How many pages ``total`` items take (at least one: the empty list)."""
    return max(1, math.ceil(total / page_size))


def _list_blocks(
    items: Sequence[PendingItemView], *, page: int, page_size: int, seal: Seal | None = None
) -> list[Block]:
    if page_size < 1:
        raise RenderError(f"page_size must be at least 1, got {page_size}")
    if not items:
        return [SectionBlock(text=mrkdwn(EMPTY_LIST))]
    pages = page_count(len(items), page_size=page_size)
    page = min(max(page, 1), pages)
    start = (page - 1) * page_size
    shown = listed_order(items)[start : start + page_size]
    blocks: list[Block] = [
        HeaderBlock(text="Waiting for your answer"),
        _summary(len(items), page, pages),
    ]
    batch = [i for i in shown if batchable(_offers(i))]
    picking = seal if seal is not None and len(batch) > 1 else None
    for index, item in enumerate(shown):
        pick = picking if item in batch else None
        blocks.extend(_item_blocks(item, index=index, seal=pick))
    if picking is not None:
        buttons = batch_buttons(approve_all=picking([_value(i) for i in batch]), count=len(batch))
        blocks.extend([buttons] if buttons is not None else [])
    if pages > 1:
        blocks.append(_pager(page, pages))
    return blocks


def _value(item: PendingItemView) -> str:
    """What a batch seals of ``item``: its pause id with the proposal listed (as its buttons
    carry it), so a batch approves what the list showed, never a proposal edited since."""
    return answer_value(item.pause_id, item.shown_round)


def _offers(item: PendingItemView) -> Offered:
    return offered(item.allowed_decisions, tool_input=item.input_model)


def listed_order(items: Sequence[PendingItemView]) -> list[PendingItemView]:
    """What expires first at the top (soonest first), then the rest by ``asked_at``, newest
    first; unreadable times go last, in their given order."""

    return sorted(items, key=lambda item: expiring_first(item.expires_at, item.asked_at))


def _summary(total: int, page: int, pages: int) -> ContextBlock:
    text = f"{total} waiting"
    if pages > 1:
        text += f" · page {page} of {pages}"
    return ContextBlock(elements=[mrkdwn(text)])


def _item_blocks(item: PendingItemView, *, index: int, seal: Seal | None = None) -> list[Block]:
    """A divider, the request with its arguments (with ``seal``, its batch checkbox beside
    them), and its buttons (action ids suffixed)."""
    fields = argument_fields(item.input_model, item.arguments, max_value=_MAX_VALUE)
    shown = [mrkdwn(field) for field in capped(fields, max_fields=MAX_FIELDS)]
    pick = None if seal is None else pick_checkbox(seal([_value(item)]), index=index)
    title = SectionBlock(text=mrkdwn(_item_text(item)), fields=shown or None, accessory=pick)
    offers = offered(item.allowed_decisions, tool_input=item.input_model)
    buttons = approval_buttons(
        item.pause_id, offers=offers, shown_round=item.shown_round, suffix=str(index)
    )
    return [DividerBlock(), title, *buttons]


def _item_text(item: PendingItemView) -> str:
    """The request by its title, who asked through which agent, who answers, when."""
    role = " ".join(item.role_description.split()) or item.role
    parts = [
        f"*{escape(_title(item), 150)}*",
        f"asked by {mention(item.owner_id)} through {escape(item.agent, 150)}",
        escape(role, 150),
        _when(item.asked_at),
    ]
    if item.time_left is not None:
        parts.append(f":hourglass: {time_left_text(item.time_left)} left")
    if not item.delivered:
        parts.append(f":satellite_antenna: {NOT_YET_DELIVERED}")
    if item.handed is not None:
        parts.append(f":handshake: {item.handed}")
    return " · ".join(parts)


def _when(iso: str) -> str:
    """Slack's date formatting, shown in the reader's time zone; the ISO text as fallback."""
    instant = parse_instant(iso)
    fallback = escape(iso, 60)
    if instant is None:
        return fallback
    return f"<!date^{int(instant.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


def _pager(page: int, pages: int) -> ActionsBlock:
    buttons: list[ButtonElement] = []
    if page > 1:
        buttons.append(
            ButtonElement(text="Previous", action_id=PREVIOUS_PAGE_ACTION, value=str(page - 1))
        )
    if page < pages:
        buttons.append(ButtonElement(text="Next", action_id=NEXT_PAGE_ACTION, value=str(page + 1)))
    return ActionsBlock(elements=buttons)


def _title(item: PendingItemView) -> str:
    """The item's question (``channels.kit.question.question_title``)."""
    return question_title(
        item.question,
        model=item.input_model,
        arguments=item.arguments,
        description=item.tool_description,
        tool=item.tool,
    )
