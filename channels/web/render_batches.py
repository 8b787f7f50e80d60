"""The inbox's selection: a checkbox on each question a batch may take, "Approve selected" /
"Reject selected" (one reason for all), and what the batch did to each question.

Pure, like ``render``: HTML out, every value escaped, no script. A checkbox's value is the
question's own link token (sealed: no pause id in the page); each is its own field
(``pick-N``), as a posted form holds each field once.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Final

from bot.core.results import PendingPause
from channels.kit.batches import BatchLine

BATCH_PATH: Final = "/inbox/batch"
PICK_PREFIX: Final = "pick-"
ROUND_SEPARATOR: Final = "~"
"""Between a pick's link token and the proposal it showed (never in a token: base64url)."""


def pick_value(token: str, pause: PendingPause) -> str:
    """A checkbox's value: the question's link token, with the proposal the list shows for a
    question that needs several approvals (as its page's forms carry it: a batch approves
    what was listed, never a proposal an edit replaced since)."""
    if pause.required_approvals <= 1:
        return token
    return f"{token}{ROUND_SEPARATOR}{pause.shown_round}"


def read_pick(value: str) -> tuple[str, int | None]:
    """A posted pick's link token and the proposal it showed (None: it did not say)."""
    token, separator, suffix = value.rpartition(ROUND_SEPARATOR)
    if separator and token and suffix.isascii() and suffix.isdigit() and len(suffix) <= 6:
        return token, int(suffix)
    return value, None


REASON_FIELD: Final = "reason"


def pick_box(index: int, token: str, title: str) -> str:
    """The checkbox of one question of the list."""
    name = f"{PICK_PREFIX}{index}"
    return (
        f'<input type="checkbox" class="pick" name="{name}" id="{name}" '
        f'value="{escape(token)}" aria-label="Select: {escape(title)}">'
    )


def batch_form(listing: str, *, csrf: str, csrf_field: str, action_field: str) -> str:
    """``listing`` (the list with its checkboxes) inside the form that answers the selection."""
    return (
        f'<form method="post" action="{BATCH_PATH}" class="batch">'
        f'<input type="hidden" name="{csrf_field}" value="{escape(csrf)}">{listing}'
        f'<label for="batch-reason">Reason for rejecting (one for all)</label>'
        f'<textarea id="batch-reason" name="{REASON_FIELD}" rows="2"></textarea>'
        f'<div class="actions"><button class="primary" name="{action_field}" value="approve">'
        f'Approve selected</button> <button class="danger" name="{action_field}" '
        f'value="reject">Reject selected</button></div></form>'
    )


def batch_result(lines: Sequence[BatchLine], *, notice: str = "") -> str:
    """What the batch did, one line per question (or ``notice``: why nothing was answered)."""
    if not lines:
        if not notice:
            return ""
        said = f'<p class="notice bad">{escape(notice)}</p>'
        return f'<section class="batch-result" aria-live="polite">{said}</section>'
    items = "".join(
        f'<li class="batch-{line.tone}"><strong>{escape(line.title)}</strong>: '
        f"{escape(line.text)}</li>"
        for line in lines
    )
    return (
        '<section class="batch-result" aria-live="polite"><h2>Answered together</h2>'
        f"<ul>{items}</ul></section>"
    )
