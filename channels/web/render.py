"""The pages, as HTML strings: pure functions of what they show, every value escaped.

No script and no inline style (the Content-Security-Policy allows neither): one stylesheet,
``STYLESHEET``, served beside the pages. A page never holds a pause id: a form posts to the
link it was opened with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Final

from channels.kit.question import Ending, QuestionView, ShownField, left, when
from channels.kit.texts import (
    NO_ARGUMENTS,
    REPLY_MEANS,
    REPLY_TITLE,
    RESPOND_MEANS,
    RESPOND_TITLE,
)
from channels.web.form import FormField, Submission, shown_value
from channels.web.offers import Offered
from channels.web.render_approvals import approvals_html, reassign_form, shown_field

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
.context { margin: .3rem 0; }
.outcome { border-left-width: 6px; }
.outcome h2 { margin-bottom: .4rem; } .outcome h3 { font-size: .95rem; margin: .8rem 0 .3rem; }
.tone-approved { border-left-color: #2e7d32; } h2.tone-approved { color: #2e7d32; }
.tone-rejected { border-left-color: #c62828; } h2.tone-rejected { color: #c62828; }
.tone-responded { border-left-color: #6a3fb5; } h2.tone-responded { color: #6a3fb5; }
.tone-expired { border-left-color: #b26a00; } h2.tone-expired { color: #b26a00; }
.tone-withdrawn { border-left-color: #5a6370; } h2.tone-withdrawn { color: #5a6370; }
.tone-cancelled { border-left-color: #37474f; } h2.tone-cancelled { color: #37474f; }
.notice.approved { border-color: #2e7d32; background: #edf7ee; }
.notice.rejected { border-color: #c62828; background: #fdecec; }
.notice.responded { border-color: #6a3fb5; background: #f3eefb; }
.notice.expired { border-color: #b26a00; background: #fff4e0; }
.notice.withdrawn { border-color: #5a6370; background: #f0f1f3; }
.notice.cancelled { border-color: #37474f; background: #eceff1; }
del { color: #8a2a2a; } ins { color: #1b5e20; text-decoration: none; font-weight: 700; }
ul.inbox .who { color: #1d1f23; }
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
    shown: str = ""
    """Which proposal the page shows (``PauseView.shown_round``), sent back with an approval."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    text: str
    tone: str = ""  # "", "bad", "done"


def question_page(
    question: QuestionView,
    *,
    forms: Forms | None,
    notice: Notice | None,
    inbox: str = "",
    ending: Ending | None = None,
    extra: str = "",
) -> str:
    """A question's page: what is asked, then the forms (``forms=None``: it no longer waits,
    ``notice`` says why); once answered, its outcome, what changed, what ran and how it ended."""
    parts = [summary(question)]
    if notice is not None:
        parts.append(_notice(notice))
    if question.outcome is not None:
        parts.append(outcome_section(question, ending))
    if forms is not None:
        parts.append(_forms(forms))
        parts.append(extra)  # a channel's own section below the forms (HTML: grants.py)
    if inbox:
        parts.append(f'<p><a href="{escape(inbox)}">Back to your inbox</a></p>')
    return page(question.title, "".join(parts), home=inbox)


def summary(q: QuestionView) -> str:
    """What is asked: the title, who asked and why, the values, the time."""
    return (
        f'<section><p class="meta">{escape(q.role)}</p>'
        f"<h1>{escape(q.title)}</h1>"
        f"{_paragraph(q.details)}"
        f'<p class="meta">{escape(asked_line(q))}</p>'
        f"{_quote('Asked', q.request)}{_quote('The agent says', q.stated_reason)}"
        f"{fields_list(q.fields)}{approvals_html(q)}"
        f"{_paragraph(timing_line(q), css='meta timing')}</section>"
    )


def asked_line(q: QuestionView) -> str:
    """``Asked by alice through refund-agent · 2026-03-02 09:00 UTC``."""
    who = f"Asked by {q.requester}" if q.requester else "Asked"
    through = f" through {q.agent}" if q.agent else ""
    at = f" · {when(q.asked_at)}" if q.asked_at is not None else ""
    return f"{who}{through}{at}"


def timing_line(q: QuestionView) -> str:
    """When a waiting question expires, its reminders, its escalation."""
    if not q.waiting:
        return ""
    parts = []
    if q.expires_at is not None:
        parts.append(f"Expires {when(q.expires_at)} ({left(q.time_left)}) if nobody answers.")
    reminded = reminded_text(q.reminded)
    said = [s for s in (reminded, "escalated" if q.escalated else "") if s]
    if said:
        parts.append(f"{' and '.join(said).capitalize()}.")
    return " ".join(parts)


def reminded_text(reminded: int) -> str:
    """``reminded 2 times``; empty before the first reminder."""
    if reminded <= 0:
        return ""
    return "reminded once" if reminded == 1 else f"reminded {reminded} times"


def fields_list(fields: Sequence[ShownField], *, css: str = "args") -> str:
    if not fields:
        return f'<p class="meta">{escape(NO_ARGUMENTS)}</p>'
    rows = "".join(f"<dt>{escape(f.title)}</dt><dd>{escape(f.value)}</dd>" for f in fields)
    return f'<dl class="{css}">{rows}</dl>'


def outcome_section(q: QuestionView, ending: Ending | None) -> str:
    """The outcome in its own tone, what an edit changed, what ran, how the run ended."""
    words = q.words
    assert words is not None
    parts = [f'<h2 class="tone-{words.tone}">{escape(words.lead)}</h2>']
    if q.changes:
        rows = "".join(
            f"<dt>{escape(c.title)}</dt><dd><del>{escape(c.was)}</del> → "
            f"<ins>{escape(c.now)}</ins></dd>"
            for c in q.changes
        )
        parts.append(f'<h3>What changed</h3><dl class="args">{rows}</dl>')
    if q.ran_with:
        parts.append(f"<h3>What ran</h3>{fields_list(q.ran_with)}")
    if ending is not None:
        css = "field-error" if ending.failed else "meta"
        parts.append(f'<h3>How it ended</h3><p class="{css}">{escape(ending.text)}</p>')
    return f'<section class="outcome tone-{words.tone}">{"".join(parts)}</section>'


def _quote(label: str, text: str) -> str:
    if not text:
        return ""
    return (
        f'<p class="context"><span class="meta">{escape(label)}:</span> '
        f"“{escape(' '.join(text.split()))}”</p>"
    )


def _paragraph(text: str, *, css: str = "") -> str:
    if not text:
        return ""
    shown = f' class="{css}"' if css else ""
    return f"<p{shown}>{escape(text)}</p>"


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
            f"{shown_field(forms.shown)}"
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
            f'<section><h2>{escape(RESPOND_TITLE)}</h2><p class="meta">{escape(RESPOND_MEANS)}'
            f'</p><form method="post">{_hidden(forms.csrf, "respond")}'
            '<label for="response">Your answer, in place of the tool</label>'
            '<textarea id="response" name="response" rows="3" maxlength="3000" required>'
            f"{escape(forms.response)}</textarea>"
            "<button>Answer instead</button></form></section>"
        )
    elif offers.reply:  # one free-text box: where respond is offered, it is that one
        parts.append(
            f'<section><h2>{escape(REPLY_TITLE)}</h2><p class="meta">{escape(REPLY_MEANS)}</p>'
            f'<form method="post">{_hidden(forms.csrf, "reply")}'
            '<label for="reply">Your answer</label>'
            f'<input type="text" id="reply" name="reply" maxlength="3000" required '
            f'value="{escape(forms.reply)}" placeholder="approve, or reject: too expensive">'
            "<button>Send</button></form></section>"
        )
    return "".join(parts) + reassign_form(forms.csrf)


def _edit(forms: Forms) -> str:
    submission = forms.submission
    errors = submission.errors if submission is not None else {}
    whole = errors.get("")
    inputs = "".join(_input(f, forms, errors.get(f.key)) for f in forms.fields)
    general = f'<p class="field-error">{escape(whole)}</p>' if whole else ""
    return (
        '<section><h2>Edit &amp; approve</h2><form method="post" novalidate>'
        f"{_hidden(forms.csrf, 'edit')}{shown_field(forms.shown)}{general}{inputs}"
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
