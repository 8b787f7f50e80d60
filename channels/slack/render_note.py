"""The requester's note: in the thread where they started the work, where their request waits.

Posted when a request is asked in a conversation out of the requester's sight (a CHANNEL role),
then updated (``chat.update``) with the outcome when the approval message is.
"""

from __future__ import annotations

from typing import Final, assert_never

from slack_sdk.models.blocks import Block, ContextBlock, SectionBlock

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
from channels.slack.render import (
    ApprovalView,
    RenderedMessage,
    argument_summary,
    channel_mention,
    escape,
    finish_message,
    mention,
    mrkdwn,
)

_MAX_SUMMARY: Final = 1000
_MAX_REASON: Final = 1000
_MAX_TITLE: Final = 300


def waiting_note(view: ApprovalView, *, conversation: str) -> RenderedMessage:
    """The request waits for approval in ``conversation``, answered by the role's people."""
    title = escape(view.title, _MAX_TITLE)
    where = channel_mention(conversation)
    headline = f":hourglass_flowing_sand: *{title}* is waiting for approval in {where}."
    blocks = _note(view, headline, footer=f"Who answers: {escape(view.role_label, 300)}")
    text = f"Waiting for approval in {where}: {title}"
    return finish_message(text=text, blocks=blocks, surface="requester's note")


def settled_note(view: ApprovalView, outcome: Outcome) -> RenderedMessage:
    """What the note becomes once the request is answered, withdrawn or cancelled."""
    title = escape(view.title, _MAX_TITLE)
    emoji, said = _said(outcome)
    blocks = _note(view, f"{emoji} *{title}* {said}", footer=None)
    return finish_message(text=f"{title} {said}", blocks=blocks, surface="requester's note")


def _note(view: ApprovalView, headline: str, *, footer: str | None) -> list[Block]:
    blocks: list[Block] = [SectionBlock(text=mrkdwn(headline))]
    summary = argument_summary(view.input_model, view.arguments, limit=_MAX_SUMMARY)
    if summary:
        blocks.append(ContextBlock(elements=[mrkdwn(summary)]))
    if footer is not None:
        blocks.append(ContextBlock(elements=[mrkdwn(footer)]))
    return blocks


def _said(outcome: Outcome) -> tuple[str, str]:
    """An emoji and what happened, as the end of a sentence about the request."""
    match outcome:
        case Approved(overrides=overrides):
            edited = " with edited arguments" if overrides else ""
            return ":white_check_mark:", f"was approved{words_of(outcome).credit(mention)}{edited}."
        case Rejected(by=by, reason=reason):
            return ":x:", f"was rejected by {mention(by)}{_reason(reason)}"
        case Responded(by=by):
            return ":speech_balloon:", f"was answered by {mention(by)} instead of the tool."
        case DecidedAtOnce(approved=approved, reason=reason):
            if approved:
                return ":white_check_mark:", "was approved at once."
            return ":x:", f"was rejected at once{_reason(reason)}"
        case Withdrawn():
            return ":heavy_minus_sign:", "was withdrawn: it is no longer needed."
        case Cancelled():
            return ":no_entry_sign:", "was cancelled."
        case Expired():
            return ":hourglass:", "expired: nobody answered in time."
        case _:
            assert_never(outcome)


def _reason(reason: str | None) -> str:
    """``: <reason>`` on the same line (escaped, one line, cut), or a full stop."""
    if reason is None or not reason.strip():
        return "."
    return f": {escape(' '.join(reason.split()), _MAX_REASON)}"
