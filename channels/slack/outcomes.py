"""From a pause as the runtime sees it to what its Slack message shows."""

from __future__ import annotations

from typing import assert_never

from bot.core.enums import PauseResolution, PauseStatus
from bot.core.results import PauseView
from channels.slack.render import ApprovalView
from channels.slack.render_message import (
    Approved,
    Cancelled,
    DecidedAtOnce,
    Expired,
    Outcome,
    Rejected,
    Responded,
    Withdrawn,
)


def approval_view(
    pause: PauseView,
    *,
    role_description: str,
    reads_replies: bool,
    separates_duties: bool = False,
) -> ApprovalView:
    """The question of ``pause`` with its real arguments (every renderer masks them)."""
    return ApprovalView(
        pause_id=pause.pause_id,
        tool=pause.ask.tool,
        tool_description=pause.tool_description,
        arguments=pause.ask.arguments,
        input_model=pause.tool_input,
        agent=pause.agent,
        owner_id=pause.owner_id,
        role=pause.role,
        role_description=role_description,
        reads_replies=reads_replies,
        separates_duties=separates_duties,
        description=pause.ask.description,
        allowed_decisions=pause.ask.allowed_decisions,
        request=pause.ask.request,
        stated_reason=pause.ask.stated_reason,
    )


def outcome_of(pause: PauseView, *, read_as: str | None = None) -> Outcome | None:
    """How ``pause`` was resolved, ``None`` while it still waits.

    ``read_as`` is the thread reply the answer was read from, when it came from one.
    """
    match pause.status:
        case PauseStatus.PENDING:
            return None
        case PauseStatus.CANCELLED:
            return closed_resolution(pause.resolution or PauseResolution.CANCELLED)
        case PauseStatus.RESOLVED | PauseStatus.TAKEN:
            return _answered(pause, read_as)
        case _:
            assert_never(pause.status)


def _answered(pause: PauseView, read_as: str | None) -> Outcome:
    decision = pause.decision
    approved = decision is not None and decision.approved
    reason = None if decision is None else decision.reason
    read_as = read_as if read_as is not None else pause.reply
    if pause.resolution is PauseResolution.DECIDED or pause.responder is None:
        return DecidedAtOnce(approved=approved, reason=reason)
    if approved:
        assert decision is not None
        return Approved(by=pause.responder, overrides=decision.override_arguments, read_as=read_as)
    if decision is not None and decision.response is not None:
        return Responded(by=pause.responder, response=decision.response)
    return Rejected(by=pause.responder, reason=reason, read_as=read_as)


def verdict(outcome: Outcome) -> str:
    """One word for how a reply was read."""
    match outcome:
        case Approved():
            return "approve"
        case Rejected():
            return "reject"
        case Responded():
            return "respond"
        case DecidedAtOnce(approved=approved):
            return "approve" if approved else "reject"
        case Withdrawn() | Cancelled() | Expired():
            return "no answer"
        case _:
            assert_never(outcome)


def closed_resolution(resolution: PauseResolution, *, by: str | None = None) -> Outcome:
    """What a withdrawal shows (``by``: who stopped the run); a resolution that answers the
    pause is no withdrawal."""
    match resolution:
        case PauseResolution.WITHDRAWN:
            return Withdrawn()
        case PauseResolution.CANCELLED:
            return Cancelled(by=by)
        case PauseResolution.EXPIRED:
            return Expired()
        case PauseResolution.REPLIED | PauseResolution.DECIDED:
            raise ValueError(f"a pause closed {resolution} was answered, not withdrawn")
        case _:
            assert_never(resolution)
