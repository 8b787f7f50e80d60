"""From a pause as the runtime sees it to what its Slack message shows (the outcome: the kit's)."""

from __future__ import annotations

from bot.core.enums import PauseAnswerer, PauseStatus
from bot.core.results import PauseView
from channels.kit.approvals import approvals_of, handover_lines
from channels.kit.outcomes import closed_resolution, outcome_of, verdict
from channels.slack.button_values import shown_round_of
from channels.slack.render import ApprovalView, mention

__all__ = ["approval_view", "closed_resolution", "outcome_of", "verdict"]


def approval_view(
    pause: PauseView,
    *,
    role_description: str,
    reads_replies: bool,
    separates_duties: bool = False,
    question: str | None = None,
) -> ApprovalView:
    """The question of ``pause`` with its real arguments (every renderer masks them); while it
    waits, the standing proposal and who approved it (a question that needs several)."""
    waiting = pause.status is PauseStatus.PENDING
    approvals = approvals_of(pause) if waiting else None
    return ApprovalView(
        pause_id=pause.pause_id,
        tool=pause.ask.tool,
        tool_description=pause.tool_description,
        arguments=pause.proposed_arguments if waiting else pause.ask.arguments,
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
        question=question,
        tool_result=pause.tool_result,
        approvals=(() if approvals is None else approvals.lines(mention))
        + (handover_lines(pause, mention) if waiting else ()),
        reassignable=waiting and pause.answered_by is PauseAnswerer.CHANNEL,
        shown_round=shown_round_of(pause) if waiting else None,
    )
