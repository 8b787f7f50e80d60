"""The pages, as HTML strings: pure functions of what they show, every value escaped.

No script and no inline style (the Content-Security-Policy allows neither): one stylesheet,
``STYLESHEET``, served beside the pages. A page never holds a pause id: a form posts to the
link it was opened with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Final

from channels.web.form import FormField, Submission, shown_value
from channels.web.offers import Offered

STYLESHEET_PATH: Final = "/static/countersign.css"
CSRF_FIELD: Final = "csrf"
ACTION_FIELD: Final = "action"

STYLESHEET: Final = """
body { font: 16px/1.45 system-ui, sans-serif; margin: 0; background: #f5f6f8; color: #1d1f23; }
main { max-width: 44rem; margin: 2rem auto; padding: 0 1rem; }
header { background: #1d2b3a; color: #fff; padding: .8rem 1rem; }
header a { color: #fff; text-decoration: none; font-weight: 600; }
section, .card { background: #fff; border: 1px solid #dde1e6; border-radius: 8px;
  padding: 1rem 1.25rem; margin: 1rem 0; }
h1 { font-size: 1.35rem; margin: .2rem 0 .6rem; }
h2 { font-size: 1.05rem; margin: 0 0 .6rem; }
dl.args { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; margin: 0; }
dl.args dt { color: #5a6370; } dl.args dd { margin: 0; font-weight: 600; word-break: break-word; }
.meta { color: #5a6370; font-size: .9rem; }
.notice { border-left: 4px solid #2f6fde; background: #eef4ff; padding: .7rem 1rem;
  border-radius: 4px; margin: 1rem 0; }
.notice.bad { border-color: #c62828; background: #fdecec; }
.notice.done { border-color: #2e7d32; background: #edf7ee; }
label { display: block; font-weight: 600; margin: .6rem 0 .2rem; }
input[type=text], input[type=number], input[type=password], select, textarea {
  width: 100%; box-sizing: border-box; padding: .45rem .55rem; font: inherit;
  border: 1px solid #b8c0ca; border-radius: 5px; }
.field-error { color: #c62828; font-size: .9rem; margin: .2rem 0 0; }
.invalid { border-color: #c62828 !important; }
.hint { color: #5a6370; font-size: .85rem; margin: .1rem 0 0; }
button { font: inherit; font-weight: 600; padding: .5rem 1.1rem; border-radius: 5px;
  border: 1px solid #b8c0ca; background: #fff; cursor: pointer; margin-top: .7rem; }
button.primary { background: #2e7d32; border-color: #2e7d32; color: #fff; }
button.danger { background: #fff; border-color: #c62828; color: #c62828; }
.row { display: flex; gap: .6rem; flex-wrap: wrap; align-items: end; }
ul.inbox { list-style: none; padding: 0; } ul.inbox li { margin: .6rem 0; }
ul.inbox a { font-weight: 600; }
.note { display: inline-block; margin-left: .5rem; padding: 0 .45rem; border-radius: 4px;
  background: #fff4e0; color: #7a4b00; font-size: .85rem; }
.timing { color: #7a4b00; }
"""


def page(title: str, body: str, *, home: str = "") -> str:
    """A whole page around ``body`` (already HTML)."""
    brand = f'<a href="{escape(home)}">Countersign</a>' if home else "Countersign"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="same-origin">'
        f"<title>{escape(title)} · Countersign</title>"
        f'<link rel="stylesheet" href="{STYLESHEET_PATH}"></head>'
        f"<body><header>{brand}</header><main>{body}</main></body></html>\n"
    )


def message_page(title: str, text: str, *, home: str = "") -> str:
    return page(
        title, f"<section><h1>{escape(title)}</h1><p>{escape(text)}</p></section>", home=home
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """A question as its page shows it: arguments already masked."""

    tool: str
    tool_description: str
    role_description: str
    arguments: Mapping[str, Any]
    asked_by: str
    asked_at: str
    answering_as: str
    description: str = ""  # what the asker says about this call (an attached graph's)
    timing: str = ""  # when it expires, how often it was reminded, whether it was escalated
    request: str = ""  # what the requester asked, in their words (masked when kept)
    stated_reason: str = ""  # the agent's own words before the call (masked when kept)


@dataclass(frozen=True, slots=True, kw_only=True)
class Forms:
    """What a waiting question's page offers: a form per answer in ``offers`` (Edit & approve
    also needs ``fields``)."""

    csrf: str
    fields: Sequence[FormField]
    real_arguments: Mapping[str, Any]
    offers: Offered
    submission: Submission | None = None
    reply: str = ""
    reject_reason: str = ""
    response: str = ""
    reason_required: bool = False
    """The role takes a rejection only with its reason (``reject_reason="required"``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    text: str
    tone: str = ""  # "", "bad", "done"


def question_page(
    question: Question, *, forms: Forms | None, notice: Notice | None, inbox: str = ""
) -> str:
    """A question's page: what is asked, then the forms (``forms=None``: it no longer waits,
    ``notice`` says why)."""
    parts = [_summary(question)]
    if notice is not None:
        parts.append(_notice(notice))
    if forms is not None:
        parts.append(_forms(forms))
    if inbox:
        parts.append(f'<p><a href="{escape(inbox)}">Back to your inbox</a></p>')
    return page(question.tool_description or question.tool, "".join(parts), home=inbox)


def _summary(q: Question) -> str:
    rows = "".join(
        f"<dt>{escape(title)}</dt><dd>{escape(plain_text(value))}</dd>"
        for title, value in q.arguments.items()
    )
    return (
        f'<section><p class="meta">{escape(q.role_description)}</p>'
        f"<h1>{escape(q.tool_description or q.tool)}</h1>"
        f"{_paragraph(q.description)}"
        f"{_paragraph(_context(q), css='meta')}"
        f'<p class="meta">Tool <code>{escape(q.tool)}</code> · asked by {escape(q.asked_by)}'
        f" · {escape(q.asked_at)}</p>"
        f'<dl class="args">{rows}</dl>'
        f"{_paragraph(q.timing, css='meta timing')}"
        f'<p class="meta">You answer as <strong>{escape(q.answering_as)}</strong>.</p></section>'
    )


def _context(q: Question) -> str:
    """Why the agent asks, on one line: what was asked, and the agent's own words."""
    parts = []
    if q.request:
        parts.append(f"Asked: “{' '.join(q.request.split())}”")
    if q.stated_reason:
        parts.append(f"The agent says: “{' '.join(q.stated_reason.split())}”")
    return " · ".join(parts)


def _paragraph(text: str, *, css: str = "") -> str:
    if not text:
        return ""
    shown = f' class="{css}"' if css else ""
    return f"<p{shown}>{escape(text)}</p>"


def plain_text(value: object) -> str:
    """A value as one line of text (a string as it is, anything else as JSON)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _notice(notice: Notice) -> str:
    tone = f" {notice.tone}" if notice.tone else ""
    return f'<div class="notice{tone}" role="status">{escape(notice.text)}</div>'


def _hidden(csrf: str, action: str) -> str:
    return (
        f'<input type="hidden" name="{CSRF_FIELD}" value="{escape(csrf)}">'
        f'<input type="hidden" name="{ACTION_FIELD}" value="{action}">'
    )


def _forms(forms: Forms) -> str:
    offers = forms.offers
    buttons = []
    if offers.approve:
        buttons.append(
            f'<form method="post" class="row">{_hidden(forms.csrf, "approve")}'
            '<button class="primary" name="go">Approve</button></form>'
        )
    if offers.reject:
        label = "Reason for rejecting" if forms.reason_required else "Reason (optional)"
        required = " required" if forms.reason_required else ""
        buttons.append(
            f'<form method="post">{_hidden(forms.csrf, "reject")}'
            f'<label for="reason">{label}</label>'
            f'<input type="text" id="reason" name="reason" maxlength="3000"{required} '
            f'value="{escape(forms.reject_reason)}">'
            '<button class="danger">Reject</button></form>'
        )
    parts = []
    if buttons:
        title = {(True, True): "Approve or reject", (True, False): "Approve"}.get(
            (offers.approve, offers.reject), "Reject"
        )
        parts.append(f"<section><h2>{title}</h2>{''.join(buttons)}</section>")
    if offers.edit and forms.fields:
        parts.append(_edit(forms))
    if offers.respond:
        parts.append(
            '<section><h2>Answer instead</h2><p class="meta">The tool does not run: the agent '
            'reads your answer in its place.</p><form method="post">'
            f"{_hidden(forms.csrf, 'respond')}"
            '<label for="response">Your answer, in place of the tool</label>'
            '<textarea id="response" name="response" rows="3" maxlength="3000" required>'
            f"{escape(forms.response)}</textarea>"
            "<button>Answer instead</button></form></section>"
        )
    if offers.reply:
        parts.append(
            '<section><h2>Or answer in your own words</h2><form method="post">'
            f'{_hidden(forms.csrf, "reply")}<label for="reply">Your answer</label>'
            f'<input type="text" id="reply" name="reply" maxlength="3000" required '
            f'value="{escape(forms.reply)}" placeholder="approve, or reject: too expensive">'
            "<button>Send</button></form></section>"
        )
    return "".join(parts)


def _edit(forms: Forms) -> str:
    submission = forms.submission
    errors = submission.errors if submission is not None else {}
    whole = errors.get("")
    inputs = "".join(_input(f, forms, errors.get(f.key)) for f in forms.fields)
    general = f'<p class="field-error">{escape(whole)}</p>' if whole else ""
    return (
        '<section><h2>Edit &amp; approve</h2><form method="post" novalidate>'
        f"{_hidden(forms.csrf, 'edit')}{general}{inputs}"
        '<button class="primary">Approve with these values</button></form></section>'
    )


def _option(value: str, text: str, *, selected: bool) -> str:
    chosen = " selected" if selected else ""
    return f'<option value="{escape(value)}"{chosen}>{escape(text)}</option>'


def _input(field: FormField, forms: Forms, error: str | None) -> str:
    name = escape(field.input_name)
    ident = f"f-{escape(field.key)}"
    typed = forms.submission.typed.get(field.key) if forms.submission is not None else None
    value = typed if typed is not None else shown_value(field, forms.real_arguments)
    if field.sensitive:
        value = ""
    invalid = ' class="invalid" aria-invalid="true"' if error else ""
    described = f' aria-describedby="{ident}-error"' if error else ""
    control: str
    match field.kind:
        case "boolean" | "choice":
            options = (
                (("true", "Yes"), ("false", "No"))
                if field.kind == "boolean"
                else tuple((c, c) for c in field.choices)
            )
            opts = "".join(_option(v, t, selected=v == value) for v, t in options)
            control = f'<select id="{ident}" name="{name}"{invalid}{described}>{opts}</select>'
        case "json":
            control = (
                f'<textarea id="{ident}" name="{name}" rows="3"{invalid}{described}>'
                f"{escape(value)}</textarea>"
            )
        case _:
            kind = "password" if field.sensitive else "text"
            mode = {"integer": "numeric", "number": "decimal"}.get(field.kind, "text")
            control = (
                f'<input type="{kind}" id="{ident}" name="{name}" inputmode="{mode}" '
                f'value="{escape(value)}" autocomplete="off"{invalid}{described}>'
            )
    hint = ""
    if field.sensitive:
        hint = '<p class="hint">Hidden. Leave empty to keep the value asked for.</p>'
    elif field.description:
        hint = f'<p class="hint">{escape(field.description)}</p>'
    shown_error = f'<p class="field-error" id="{ident}-error">{escape(error)}</p>' if error else ""
    return f'<label for="{ident}">{escape(field.title)}</label>{control}{hint}{shown_error}'
