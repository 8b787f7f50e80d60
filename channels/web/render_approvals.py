"""The web page's parts for four eyes and handing on: what an edit changed (was → now) and who
approved the standing proposal, how many more are needed — the kit's lines
(``channels.kit.approvals``), each person by their id —, and the Reassign form."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from channels.kit.question import QuestionView
from channels.kit.texts import handed_on


def approvals_html(q: QuestionView) -> str:
    """The approvals of a waiting question (empty for a question one answer closes), and who
    it was handed to."""
    handed = "".join(
        f'<p class="meta handed">{escape(handed_on(h.by, h.to))}</p>'
        for h in q.handed
        if h.kind == "reassigned"
    )
    if q.approvals is None:
        return handed
    changed = "".join(
        f"<li>{escape(c.title)}: {escape(c.was)} → {escape(c.now)}</li>" for c in q.changes
    )
    lines = "".join(f'<p class="meta approvals">{escape(line)}</p>' for line in q.approvals.lines())
    return (f'<ul class="changes">{changed}</ul>' if changed else "") + lines + handed


REASSIGN_TITLE = "Hand it to someone else"
REASSIGN_MEANS = (
    "They may answer it from now on (you still may too); they are sent a link. Never the requester."
)


def reassign_form(csrf: str) -> str:
    """The Reassign form: who to hand the question to (their id, as the approvers are named)."""
    return (
        f"<section><h2>{escape(REASSIGN_TITLE)}</h2>"
        f'<p class="meta">{escape(REASSIGN_MEANS)}</p><form method="post">'
        f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
        '<input type="hidden" name="action" value="reassign">'
        '<label for="to">Hand it to</label>'
        '<input type="text" id="to" name="to" maxlength="255" required>'
        "<button>Reassign</button></form></section>"
    )


SHOWN_FIELD = "shown"
"""The form field that says which proposal the page showed (``PauseView.shown_round``)."""


def shown_field(shown: str) -> str:
    """The hidden field an approval carries back: which proposal it approves."""
    if not shown:
        return ""
    return f'<input type="hidden" name="{SHOWN_FIELD}" value="{escape(shown)}">'


def shown_round(fields: Mapping[str, str]) -> int | None:
    """The proposal a posted approval was shown, when its form said (a whole number)."""
    value = fields.get(SHOWN_FIELD, "")
    return int(value) if value.isdigit() and len(value) < 6 else None
