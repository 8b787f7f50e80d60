"""The inbox page: what waits for one person, what expires first at the top.

Pure, like ``render``: HTML out, every value escaped, no script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from channels.web.render import page, plain_text


@dataclass(frozen=True, slots=True, kw_only=True)
class InboxEntry:
    url: str
    tool: str
    tool_description: str
    arguments: Mapping[str, Any]  # masked
    asked_at: str
    time_left: str = ""  # "3 h 20 min left"; empty when it never expires
    reminded: str = ""  # "reminded 2 times"; empty before the first reminder
    escalated: bool = False  # it was escalated to the person whose inbox this is

    def notes(self) -> list[str]:
        shown = [self.time_left, self.reminded, "escalated to you" if self.escalated else ""]
        return [n for n in shown if n]


def inbox_page(approver: str, entries: Sequence[InboxEntry], *, extra: str = "") -> str:
    """What waits for ``approver`` in the order given; ``extra`` (HTML) goes above the list."""
    if entries:
        items = "".join(_item(e) for e in entries)
        listing = f'<ul class="inbox">{items}</ul>'
    else:
        listing = '<p class="meta">Nothing waits for you.</p>'
    body = f"{extra}<section><h1>Waiting for {escape(approver)}</h1>{listing}</section>"
    return page("Inbox", body, home="/inbox")


def _item(entry: InboxEntry) -> str:
    notes = "".join(f'<span class="note">{escape(n)}</span>' for n in entry.notes())
    return (
        f'<li class="card"><a href="{escape(entry.url)}">'
        f"{escape(entry.tool_description or entry.tool)}</a>{notes}"
        f'<div class="meta">{escape(_one_line(entry.arguments))} · {escape(entry.asked_at)}'
        "</div></li>"
    )


def _one_line(arguments: Mapping[str, Any]) -> str:
    return " · ".join(f"{k}: {plain_text(v)}" for k, v in arguments.items())
