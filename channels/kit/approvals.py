"""What a question that needs several approvals shows: who approved the standing proposal, who
changed it, and how many approvals are still needed ("Approved by <@ann> · 1 of 2 needed").
Computed once from the pause (``PauseView.approvals``) and rendered by each channel with its own
way of naming a person (Slack's mention, the web's and the terminal's plain id)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.core.results import PauseView
from channels.kit.texts import approvals_needed, approvals_so_far, edited_by, handed_on


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalsShown:
    """The approvals of one waiting question, as every channel shows them."""

    approvers: tuple[str, ...]
    """Who approved the standing proposal, oldest first."""
    required: int
    changed_by: str | None = None
    """Who proposed the standing proposal by an edit (the approvals before it are void)."""

    @property
    def still_needed(self) -> int:
        return max(0, self.required - len(self.approvers))

    def lines(self, name: Callable[[str], str] = str) -> tuple[str, ...]:
        """The lines said of them; ``name`` writes a person (Slack: a mention)."""
        said = []
        if self.changed_by is not None:
            said.append(edited_by(name(self.changed_by)))
        if self.approvers:
            who = ", ".join(name(a) for a in self.approvers)
            said.append(approvals_so_far(who, len(self.approvers), self.required))
        else:
            said.append(approvals_needed(self.required))
        return tuple(said)

    def line(self, name: Callable[[str], str] = str) -> str:
        """The same on one line."""
        return " · ".join(self.lines(name))


def nobody_yet(required: int) -> ApprovalsShown | None:
    """What a question just asked shows of its approvals (None: one answer closes it)."""
    return ApprovalsShown(approvers=(), required=required) if required > 1 else None


def approvals_of(pause: PauseView) -> ApprovalsShown | None:
    """What ``pause`` shows of its approvals; None for a question one answer closes."""
    if pause.required_approvals <= 1:
        return None
    counted = [a for a in pause.approvals if a.counted]
    edits = [a for a in counted if a.edited]
    return ApprovalsShown(
        approvers=tuple(a.by for a in counted),
        required=pause.required_approvals,
        changed_by=edits[-1].by if edits else None,
    )


def handover_lines(pause: PauseView, name: Callable[[str], str] = str) -> tuple[str, ...]:
    """Who a waiting question was handed to (Reassign), one line each; ``name`` writes a
    person."""
    return tuple(
        handed_on(name(h.by), name(h.to)) for h in pause.handovers if h.kind == "reassigned"
    )
