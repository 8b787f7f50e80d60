"""The web page's part of a question that needs several approvals: what an edit changed (was →
now) and who approved the standing proposal, how many more are needed — the kit's lines
(``channels.kit.approvals``), each person by their id."""

from __future__ import annotations

from html import escape

from channels.kit.question import QuestionView


def approvals_html(q: QuestionView) -> str:
    """The approvals of a waiting question (empty for a question one answer closes)."""
    if q.approvals is None:
        return ""
    changed = "".join(
        f"<li>{escape(c.title)}: {escape(c.was)} → {escape(c.now)}</li>" for c in q.changes
    )
    lines = "".join(f'<p class="meta approvals">{escape(line)}</p>' for line in q.approvals.lines())
    return (f'<ul class="changes">{changed}</ul>' if changed else "") + lines
