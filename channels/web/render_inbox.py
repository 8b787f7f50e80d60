"""The inbox page: what waits for one person (what expires first at the top), then what they
decided (what they answered, what ran, how it ended).

Pure, like ``render``: HTML out, every value escaped, no script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from channels.kit.question import Ending, QuestionView, left, one_line
from channels.kit.texts import NOT_YET_DELIVERED, NOTHING_DECIDED, NOTHING_WAITS
from channels.web.render import ACTION_FIELD, CSRF_FIELD, asked_line, page, reminded_text
from channels.web.render_batches import batch_form, pick_box


@dataclass(frozen=True, slots=True, kw_only=True)
class InboxEntry:
    """One question in the inbox, and the link that opens it as this person."""

    url: str
    question: QuestionView
    escalated: bool = False
    """It was escalated to the person whose inbox this is."""
    ending: Ending | None = None
    """How the run ended (a decided question's)."""
    delivered: bool = True
    """Its channel was given it (False during an outage: it is asked again)."""
    pick: str = ""
    """Its link token, when a batch may take it (``channels.kit.batches.may_batch``)."""
    handed: str = ""
    """Why the person is asked it as a delegate (``channels.kit.waiting.HandedOn``)."""

    def notes(self) -> list[str]:
        q = self.question
        if not q.waiting:
            return []
        shown = [left(q.time_left), reminded_text(q.reminded)]
        escalated = "escalated to you" if self.escalated else ""
        undelivered = "" if self.delivered else NOT_YET_DELIVERED
        return [n for n in (*shown, escalated, self.handed, undelivered) if n]


def inbox_page(
    approver: str,
    entries: Sequence[InboxEntry],
    *,
    decided: Sequence[InboxEntry] = (),
    extra: str = "",
    below: str = "",
    batch_csrf: str = "",
) -> str:
    """What waits for ``approver`` in the order given, then what they decided; ``extra``
    (HTML) goes above the list. With ``batch_csrf``, the questions a batch may take have a
    checkbox, and the list is the form that answers the selection."""
    if entries:
        items = "".join(_item(e, index=i) for i, e in enumerate(entries))
        listing = f'<ul class="inbox">{items}</ul>'
        if batch_csrf and any(e.pick for e in entries):
            listing = batch_form(
                listing, csrf=batch_csrf, csrf_field=CSRF_FIELD, action_field=ACTION_FIELD
            )
    else:
        listing = f'<p class="meta">{escape(NOTHING_WAITS)}</p>'
    if decided:
        answered = f'<ul class="inbox decided">{"".join(_item(e) for e in decided)}</ul>'
    else:
        answered = f'<p class="meta">{escape(NOTHING_DECIDED)}</p>'
    body = (
        f"{extra}<section><h1>Waiting for {escape(approver)}</h1>{listing}</section>"
        f"<section><h2>Decided</h2>{answered}</section>{below}"
    )
    return page("Inbox", body, home="/inbox")


def _item(entry: InboxEntry, *, index: int = -1) -> str:
    q = entry.question
    box = pick_box(index, entry.pick, q.title) if entry.pick and index >= 0 else ""
    notes = "".join(f'<span class="note">{escape(n)}</span>' for n in entry.notes())
    words = q.words
    outcome = ""
    if words is not None:
        said = words.sentence(lambda who: who)
        outcome = f'<div class="tone-{words.tone}"><strong>{escape(said)}</strong></div>'
        if q.ran_with:
            outcome += f'<div class="meta">What ran: {escape(one_line(q.ran_with))}</div>'
        if entry.ending is not None:
            outcome += f'<div class="meta">{escape(entry.ending.text)}</div>'
    request = f"Asked: “{' '.join(q.request.split())}”" if q.request else ""
    return (
        f'<li class="card">{box}<a href="{escape(entry.url)}">{escape(q.title)}</a>{notes}'
        f'<div class="meta who">{escape(asked_line(q))}</div>'
        + (f'<div class="meta">{escape(request)}</div>' if request else "")
        + f'<div class="meta">{escape(one_line(q.fields))}</div>{outcome}</li>'
    )
