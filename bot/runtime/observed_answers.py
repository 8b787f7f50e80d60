"""Each answer given to a pause, observed once: counted (``countersign_answers``) and logged.

Every way of answering ends here (the one answer path, ``bot.runtime.answers.answer``, under
``App.answer``, ``App.resume`` and every channel; a Slack button refused before its modal
opens), so an operator reads one line per answer whichever path it took: ``INFO`` for an
answer recorded, a reply kept to read, one not understood or one to a closed question;
``WARNING`` for a refusal (the wrong person, an invalid decision). The line carries
``tenant_id``, ``role``, ``outcome`` and ``code`` as fields (``COUNTERSIGN_LOG_FORMAT=json``),
and names who answered; never the pause id, a reply's words or a decision's reason.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, assert_never

from pydantic import ValidationError

from bot.core.answers import (
    AlreadyClosed,
    Answered,
    AnswerOutcome,
    ApprovalCounted,
    NotUnderstood,
    Refused,
    ReplyKept,
)
from bot.core.dtos import ToolCallApprovalDecision, decision_kind
from bot.core.metrics import Metrics
from bot.core.results import PauseView

log: Final = logging.getLogger("countersign.answers")


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerNote:
    """What one answer became, as counted and logged."""

    outcome: str
    """``answered``, ``reply_kept``, ``not_understood``, ``already_closed`` or ``refused``."""
    code: str = ""
    """The error code of a refusal, a reply not understood or a closed question."""
    role: str | None = None
    what: str = ""
    """How it reads in the line: ``approved refund-card-tool``."""


def observe_answer(metrics: Metrics, outcome: AnswerOutcome, *, tenant_id: str, by: str) -> None:
    """Count ``outcome`` and log it, one line."""
    note_answer(metrics, note_of(outcome), tenant_id=tenant_id, by=by)


_HEADLINES: Final = {
    "answered": "recorded",
    "approval_counted": "counted (more approvals needed)",
    "reply_kept": "kept to read",
    "not_understood": "not understood",
    "already_closed": "to a closed question",
    "refused": "refused",
}


def note_answer(metrics: Metrics, note: AnswerNote, *, tenant_id: str, by: str) -> None:
    """Count ``note`` (its code only for what was not taken) and log it: ``answer recorded:
    approved refund-card-tool, by U0MANAGER (tenant T0TEAM, role refund-approval-channel)``."""
    metrics.answered(note.outcome, "" if note.outcome == "already_closed" else note.code)
    code = f" ({note.code})" if note.code else ""
    role = f", role {note.role}" if note.role else ""
    log.log(
        logging.WARNING if note.outcome == "refused" else logging.INFO,
        "answer %s%s: %s, by %s (tenant %s%s)",
        _HEADLINES.get(note.outcome, note.outcome),
        code,
        note.what or "an answer",
        by or "nobody named",
        tenant_id,
        role,
        extra={
            "tenant_id": tenant_id,
            "role": note.role,
            "outcome": note.outcome,
            "code": note.code or None,
        },
    )


def note_of(outcome: AnswerOutcome) -> AnswerNote:
    """What ``outcome`` is, as counted and logged."""
    match outcome:
        case Answered(pause=pause):
            return AnswerNote(
                outcome="answered",
                role=pause.role,
                what=f"{verdict_of(pause.decision)} {_tool(pause)}",
            )
        case ApprovalCounted(pause=pause, still_needed=still_needed):
            return AnswerNote(
                outcome="approval_counted",
                role=pause.role,
                what=f"an approval of {_tool(pause)} ({still_needed} more needed)",
            )
        case ReplyKept(pause=pause):
            return AnswerNote(
                outcome="reply_kept", role=pause.role, what=f"a reply about {_tool(pause)}"
            )
        case NotUnderstood(pause=pause, error=error):
            return AnswerNote(
                outcome="not_understood",
                code=error.code,
                role=pause.role,
                what=f"a reply about {_tool(pause)}",
            )
        case AlreadyClosed(pause=pause, error=error):
            return AnswerNote(
                outcome="already_closed",
                code=error.code,
                role=pause.role,
                what=f"an answer about {_tool(pause)}",
            )
        case Refused(pause=pause, error=error):
            return AnswerNote(
                outcome="refused",
                code=error.code,
                role=None if pause is None else pause.role,
                what="an answer" if pause is None else f"an answer about {_tool(pause)}",
            )
        case _ as never:
            assert_never(never)


def _tool(pause: PauseView) -> str:
    return pause.ask.tool


_VERDICTS: Final = {
    "approve": "approved",
    "edit": "approved with changes",
    "reject": "rejected",
    "respond": "answered instead of",  # a response in place of the tool's result
}


def verdict_of(decision: ToolCallApprovalDecision | Mapping[str, object] | None) -> str:
    """How a decision reads in the line (``approved``, ``rejected``...)."""
    if decision is None:
        return "answered"
    try:
        checked = ToolCallApprovalDecision.model_validate(decision)
    except ValidationError:  # pragma: no cover - a recorded decision was validated
        return "answered"
    return _VERDICTS[decision_kind(checked)]
