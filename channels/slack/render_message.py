"""The approval message, and what it becomes (``chat.update``) once the pause is resolved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, TypeAlias, assert_never

from slack_sdk.models.blocks import Block, ContextBlock, HeaderBlock, SectionBlock

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
# Outcomes: a closed union, matched exhaustively.


@dataclass(frozen=True, slots=True, kw_only=True)
class Approved:
    """Approved by ``by`` (a Slack user id); ``overrides`` are the edited arguments, if any.

    ``read_as`` is the thread reply the approval was read from, when it came from one.
    """

    by: str
    overrides: Mapping[str, Any] | None = None
    read_as: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejected:
    """Rejected by ``by``, with an optional reason; ``read_as`` as for :class:`Approved`."""

    by: str
    reason: str | None = None
    read_as: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Responded:
    """Answered by ``by`` in place of the tool (the tool did not run): ``response`` is what the
    asker reads instead of its result."""

    by: str
    response: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DecidedAtOnce:
    """Decided without asking anybody (e.g. by a policy), approved or rejected."""

    approved: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Withdrawn:
    """The agent no longer needs the answer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancelled:
    """The run was cancelled; ``by`` (a Slack user id) when someone stopped it (an agent
    session's Stop)."""

    by: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Expired:
    """Nobody answered before the question's expiry (not a rejection)."""


Outcome: TypeAlias = (
    Approved | Rejected | Responded | DecidedAtOnce | Withdrawn | Cancelled | Expired
)


# --------------------------------------------------------------------------------------------
# Messages.


def approval_message(view: ApprovalView) -> RenderedMessage:
    """The question with its buttons; the fallback text names the request, never the pause."""
    blocks: list[Block] = [
        *_question(view),
        _asked_by(view),
        *approval_buttons(view.pause_id, offers=view.offered),
    ]
    hint = _reply_hint(view) if view.reads_replies else None
    if hint is not None:
        blocks.append(ContextBlock(elements=[mrkdwn(hint)]))
    if view.separates_duties:
        blocks.append(ContextBlock(elements=[mrkdwn(_not_by_the_requester(view))]))
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
    requester = f"<@{view.owner_id}>" if view.owner_id else "The requester"
    return f"{requester} asked for this and cannot approve it: someone else must answer."


def outcome_message(view: ApprovalView, outcome: Outcome) -> RenderedMessage:
    """The question without buttons, and how it was resolved."""
    said = _describe(view, outcome)
    blocks: list[Block] = [
        *_question(view),
        _asked_by(view),
        SectionBlock(text=mrkdwn(truncate(said.headline, MAX_SECTION_TEXT))),
        *said.details,
    ]
    text = f"{escape(view.title, 300)}: {said.summary}"
    return finish_message(text=text, blocks=blocks, surface="outcome message")


def _question(view: ApprovalView) -> list[Block]:
    """The title as the header, the rest of the description below it, the arguments as fields."""
    title = view.title
    blocks: list[Block] = [HeaderBlock(text=truncate(title, MAX_HEADER_TEXT))]
    rest = _below_header(view.tool_description, title)
    if rest:
        blocks.append(SectionBlock(text=mrkdwn(escape(rest, MAX_SECTION_TEXT))))
    said = (view.description or "").strip()
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
    they were kept; quoted, escaped and cut here)."""
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
    """Who asked, through which agent, who answers; the tool's own name last, for the record."""
    parts = [
        f"Asked by {mention(view.owner_id)} through {escape(view.agent, 200)}",
        escape(view.role_label, 300),
        f"tool {escape(view.tool, 200)}",
    ]
    return ContextBlock(elements=[mrkdwn(" · ".join(parts))])


# --------------------------------------------------------------------------------------------
# Describing an outcome.


@dataclass(frozen=True, slots=True, kw_only=True)
class _Description:
    headline: str  # mrkdwn, shown in a section
    summary: str  # for the fallback text
    details: list[Block] = field(default_factory=list)


def _describe(view: ApprovalView, outcome: Outcome) -> _Description:
    match outcome:
        case Approved(by=by, overrides=overrides, read_as=read_as):
            edits = _edited_fields(view, overrides)
            headline = f":white_check_mark: *Approved* by {mention(by)}"
            if edits:
                headline += " with edited arguments:"
            details = [
                *field_sections(edits, max_fields=20),
                *_read_as(read_as, "approve"),
            ]
            return _Description(
                headline=headline, summary=f"approved by {mention(by)}", details=details
            )
        case Rejected(by=by, reason=reason, read_as=read_as):
            return _Description(
                headline=f":x: *Rejected* by {mention(by)}{_quoted(reason)}",
                summary=f"rejected by {mention(by)}",
                details=_read_as(read_as, "reject"),
            )
        case Responded(by=by, response=response):
            return _Description(
                headline=f":speech_balloon: *Answered instead of the tool* by {mention(by)}"
                f"{_quoted(response)}",
                summary=f"answered by {mention(by)} instead of the tool",
            )
        case DecidedAtOnce(approved=approved, reason=reason):
            verdict = "approved" if approved else "rejected"
            emoji = ":white_check_mark:" if approved else ":x:"
            return _Description(
                headline=f"{emoji} *Decided at once: {verdict}*{_quoted(reason)}",
                summary=f"decided at once: {verdict}",
            )
        case Withdrawn():
            return _Description(
                headline=":heavy_minus_sign: *No longer needed*",
                summary="no longer needed",
            )
        case Cancelled(by=by) if by:
            return _Description(
                headline=f":octagonal_sign: *Stopped* by {mention(by)}",
                summary=f"stopped by {mention(by)}",
            )
        case Cancelled():
            return _Description(headline=":no_entry_sign: *Cancelled*", summary="cancelled")
        case Expired():
            return _Description(
                headline=":hourglass: *Expired*: nobody answered in time",
                summary="expired: nobody answered in time",
            )
        case _:
            assert_never(outcome)


def _edited_fields(view: ApprovalView, overrides: Mapping[str, Any] | None) -> list[str]:
    """The overridden arguments that differ from the asked ones, masked like the question."""
    if not overrides:
        return []
    changed = {
        name: value
        for name, value in overrides.items()
        if name not in view.arguments or view.arguments[name] != value
    }
    return argument_fields(view.input_model, changed)


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
