"""The inbox's delegations section: each line (the kit's words) with End now on the person's
own, and the form that starts one. Pure HTML, every value escaped, no script."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Final

from channels.kit.delegations import DELEGATE_FIELD, UNTIL_FIELD, DelegationLine
from channels.kit.question import when

END_ACTION: Final = "end"
START_ACTION: Final = "start"
ID_FIELD: Final = "delegation"
TITLE: Final = "Handing your questions on"
NONE_YET: Final = "Nobody answers your questions for you, and you answer nobody's."


def section(
    lines: Sequence[DelegationLine], *, path: str, csrf: str, csrf_field: str, notice: str = ""
) -> str:
    """The section: its notice (what the last form did), the lines, the start form."""
    hidden = f'<input type="hidden" name="{csrf_field}" value="{escape(csrf)}">'
    said = f'<p class="notice">{escape(notice)}</p>' if notice else ""
    items = "".join(_line(line, path=path, hidden=hidden) for line in lines)
    listing = (
        f'<ul class="inbox delegations">{items}</ul>'
        if items
        else f'<p class="meta">{escape(NONE_YET)}</p>'
    )
    start = (
        f'<form method="post" action="{path}">{hidden}'
        f'<input type="hidden" name="action" value="{START_ACTION}">'
        f'<label for="{DELEGATE_FIELD}">Hand my questions to</label>'
        f'<input type="text" id="{DELEGATE_FIELD}" name="{DELEGATE_FIELD}" maxlength="255" '
        "required>"
        f'<label for="{UNTIL_FIELD}">Until (UTC)</label>'
        f'<input type="datetime-local" id="{UNTIL_FIELD}" name="{UNTIL_FIELD}" required>'
        "<button>Hand them on</button></form>"
    )
    return f"<section><h2>{escape(TITLE)}</h2>{said}{listing}{start}</section>"


def _line(line: DelegationLine, *, path: str, hidden: str) -> str:
    text = escape(line.said(str, when))
    if not line.own:
        return f"<li>{text}</li>"
    delegation_id = escape(line.delegation.delegation_id)
    return (
        f'<li>{text}<form method="post" action="{path}">{hidden}'
        f'<input type="hidden" name="action" value="{END_ACTION}">'
        f'<input type="hidden" name="{ID_FIELD}" value="{delegation_id}">'
        '<button class="danger">End now</button></form></li>'
    )
