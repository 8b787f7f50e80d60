"""The approval message, and what it becomes (``chat.update``) once the pause is resolved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, assert_never

from slack_sdk.models.blocks import Block, ContextBlock, HeaderBlock, SectionBlock

from channels.kit.outcomes import (
    Approved,
    Cancelled,
    DecidedAtOnce,
    Expired,
    Outcome,
    Rejected,
    Responded,
    Withdrawn,
    words_of,
)
from channels.kit.question import asker_said, changes_of
from channels.kit.texts import not_by_the_requester, tool_returned
from channels.slack.render import (
    MAX_HEADER_TEXT,
    MAX_SECTION_TEXT,
    ApprovalView,
    RenderedMessage,
    approval_buttons,
    approver_mention,
    argument_fields,
    channel_mention,
    escape,
    field_sections,
    finish_message,
    mention,
    mrkdwn,
    slack_date,
    truncate,
)
from channels.slack.render_approvals import approvals_blocks, reassign_blocks
from channels.slack.render_grants import grant_button

REPLY_HINT: Final = (
    "Or answer in this thread: write approve, or reject followed by a colon and your reason."
)
APPROVE_REPLY_HINT: Final = "Or answer in this thread: write approve."
REJECT_REPLY_HINT: Final = (
    "Or answer in this thread: write reject followed by a colon and your reason."
)

_MAX_ARGUMENT_FIELDS: Final = 40  # four sections: the message stays readable and far from 50 blocks
_MAX_REASON: Final = 2500


# --------------------------------------------------------------------------------------------
# Messages.


def approval_message(view: ApprovalView) -> RenderedMessage:
    """The question with its buttons; the fallback text names the request, never the pause."""
    blocks: list[Block] = [
        *_question(view),
        _asked_by(view),
        *approval_buttons(view.pause_id, offers=view.offered, shown_round=view.shown_round),
        *grant_button(view),  # "Approve and allow similar…" (channels.slack.render_grants)
    ]
    hint = _reply_hint(view) if view.reads_replies else None
    if hint is not None:
        blocks.append(ContextBlock(elements=[mrkdwn(hint)]))
    if view.separates_duties:
        blocks.append(ContextBlock(elements=[mrkdwn(_not_by_the_requester(view))]))
    blocks += approvals_blocks(view.approvals)
    blocks += reassign_blocks(view.pause_id) if view.reassignable else []
    if view.expires_at is not None:
        blocks.append(ContextBlock(elements=[mrkdwn(expiry_line(view.expires_at))]))
    text = f"Approval needed: {escape(view.title, 300)}"
    return finish_message(text=text, blocks=blocks, surface="approval message")


def expiry_line(expires_at: datetime) -> str:
    """When a question expires, for a person."""
    return f":hourglass: Expires {slack_date(expires_at)} if nobody answers."


def reminder_text(
    view: ApprovalView, approvers: Sequence[str], *, reminded: int, expires_at: datetime | None
) -> str:
    """A reminder in the question's thread, mentioning who may answer."""
    who = " ".join(approver_mention(a) for a in approvers)
    nth = "" if reminded == 0 else f" (reminder {reminded + 1})"
    line = f":bell: {who} this still waits for an answer{nth}: {escape(view.title, 300)}."
    return line if expires_at is None else f"{line} {expiry_line(expires_at)}"


def escalation_text(view: ApprovalView, approvers: Sequence[str], *, where: str | None) -> str:
    """An escalation: in the question's thread (``where`` None) or naming the copy's place."""
    who = " ".join(approver_mention(a) for a in approvers)
    lead = f"{who} escalated" if who else "Escalated"
    if where:
        asked = f"asked again in {channel_mention(where)}"
    else:
        asked = "you may answer it too" if who else "it still waits for an answer"
    return f":rotating_light: {lead}: nobody answered {escape(view.title, 300)} in time; {asked}."


def _reply_hint(view: ApprovalView) -> str | None:
    """How to answer in words: only the answers the asker takes."""
    offers = view.offered
    if offers.approve and offers.reject:
        return REPLY_HINT
    if offers.approve:
        return APPROVE_REPLY_HINT
    return REJECT_REPLY_HINT if offers.reject else None


def _not_by_the_requester(view: ApprovalView) -> str:
    return not_by_the_requester(f"<@{view.owner_id}>" if view.owner_id else "")


def outcome_message(view: ApprovalView, outcome: Outcome) -> RenderedMessage:
    """The question without buttons, and how it was resolved."""
    said = _describe(view, outcome)
    blocks: list[Block] = [
        *_question(view),
        _asked_by(view),
        SectionBlock(text=mrkdwn(truncate(said.headline, MAX_SECTION_TEXT))),
        *said.details,
    ]
    if view.tool_result:  # how it ended, in the kit's words
        ended = tool_returned(view.tool_result)
        blocks.append(ContextBlock(elements=[mrkdwn(escape(ended, 1500))]))
    text = f"{escape(view.title, 300)}: {said.summary}"
    return finish_message(text=text, blocks=blocks, surface="outcome message")


def outcome_line(view: ApprovalView, outcome: Outcome) -> str:
    """How ``outcome`` reads on its message, one mrkdwn headline (the kit's words): what a
    settled item of a turn's message shows in place of its buttons."""
    return truncate(_describe(view, outcome).headline, MAX_SECTION_TEXT)


def _question(view: ApprovalView) -> list[Block]:
    """The title as the header, the rest of the description below it, the arguments as fields."""
    title = view.title
    blocks: list[Block] = [HeaderBlock(text=truncate(title, MAX_HEADER_TEXT))]
    rest = _below_header(view.tool_description, title)
    if rest:
        blocks.append(SectionBlock(text=mrkdwn(escape(rest, MAX_SECTION_TEXT))))
    said = asker_said(view.description)  # the kit's rule: a generic default says nothing
    if said and said != rest:
        blocks.append(SectionBlock(text=mrkdwn(escape(said, MAX_SECTION_TEXT))))
    fields = argument_fields(view.input_model, view.arguments)
    if fields:
        blocks.extend(field_sections(fields, max_fields=_MAX_ARGUMENT_FIELDS))
    else:
        blocks.append(ContextBlock(elements=[mrkdwn("_No arguments._")]))
    context = context_line(view.request, view.stated_reason)
    if context:
        blocks.append(ContextBlock(elements=[mrkdwn(context)]))
    return blocks


def context_line(request: str | None, stated_reason: str | None) -> str:
    """Why the agent asks, on one line: what was asked and the agent's own words (masked when
    they were kept; quoted, escaped and cut here), in the kit's words."""
    parts = []
    if request:
        parts.append(f"Asked: “{escape(' '.join(request.split()), 300)}”")
    if stated_reason:
        parts.append(f"The agent says: “{escape(' '.join(stated_reason.split()), 600)}”")
    return " · ".join(parts)


def _below_header(description: str, title: str) -> str:
    """What the header does not show: the description's other lines, or all of it when the
    header had to be cut."""
    description = description.strip()
    if len(title) > MAX_HEADER_TEXT:
        return description
    return "\n".join(description.splitlines()[1:]).strip()


def _asked_by(view: ApprovalView) -> ContextBlock:
    """Who asked, through which agent, and who answers (the tool's id is not for people)."""
    parts = [
        f"Asked by {mention(view.owner_id)} through {escape(view.agent, 200)}",
        escape(view.role_label, 300),
    ]
    return ContextBlock(elements=[mrkdwn(" · ".join(parts))])


# --------------------------------------------------------------------------------------------
# Describing an outcome.


@dataclass(frozen=True, slots=True, kw_only=True)
class _Description:
    headline: str  # mrkdwn, shown in a section
    summary: str  # for the fallback text
    details: list[Block] = field(default_factory=list)


_EMOJI: Final = {
    "approved": ":white_check_mark:",
    "rejected": ":x:",
    "responded": ":speech_balloon:",
    "withdrawn": ":heavy_minus_sign:",
    "cancelled": ":no_entry_sign:",
    "expired": ":hourglass:",
}


def _describe(view: ApprovalView, outcome: Outcome) -> _Description:
    """The kit's words of ``outcome`` (``channels.kit.outcomes``) in mrkdwn: the lead in bold,
    who answered mentioned, their own words quoted; an edit's changes, a reply's reading."""
    words = words_of(outcome)
    emoji = (
        ":octagonal_sign:" if isinstance(outcome, Cancelled) and outcome.by else _EMOJI[words.tone]
    )
    by = words.credit(mention)
    note = f": {words.note}" if words.note else ""
    headline = f"{emoji} *{words.lead}*{by}{note}{_quoted(words.quote)}"
    details: list[Block] = []
    match outcome:
        case Approved(overrides=overrides, read_as=read_as):
            edits = _edited_fields(view, overrides)
            if edits:
                headline += "\nWhat changed:"
            details = [*field_sections(edits, max_fields=20), *_read_as(read_as, "approve")]
        case Rejected(read_as=read_as):
            details = _read_as(read_as, "reject")
        case Responded() | DecidedAtOnce() | Withdrawn() | Cancelled() | Expired():
            pass
        case _:
            assert_never(outcome)
    return _Description(headline=headline, summary=words.summary(mention), details=details)


def _edited_fields(view: ApprovalView, overrides: Mapping[str, Any] | None) -> list[str]:
    """What an edit changed, ``*Title*\nwas → now`` (``channels.kit.question.changes_of``),
    masked like the question."""
    return [
        f"*{escape(c.title, 150)}*\n{escape(f'{c.was} → {c.now}', 1800)}"
        for c in changes_of(view.input_model, view.arguments, overrides)
    ]


def _quoted(reason: str | None) -> str:
    if reason is None or not reason.strip():
        return ""
    lines = escape(reason.strip(), _MAX_REASON).splitlines()
    return "\n" + "\n".join(f">{line}" for line in lines)


def _read_as(reply: str | None, verdict: str) -> list[Block]:
    if reply is None:
        return []
    shown = escape(" ".join(reply.split()), 200)
    return [ContextBlock(elements=[mrkdwn(f'Read "{shown}" as {verdict}')])]
