"""Several approvals of one question (a role's ``required_approvals``): who approved what.

A question of such a role waits until that many distinct approvers approved the *same*
arguments. An edit ("Edit & approve") replaces the proposal: it starts a new round, the
approvals of the rounds before are void (kept for the audit, never counted), and the editor's
own approval is the first of the new round. ``Approvals`` is the state kept with the pause,
changed atomically by the store (compare-and-set on its ``version``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Approval:
    """One approver's approval of a question that needs several (``PauseView.approvals``,
    ``PauseAuditEntry.approvals``)."""

    by: str
    """Who approved (the answering person's id)."""
    at: str
    """When, ISO 8601 on the application's clock."""
    arguments: dict[str, Any]
    """What they approved: the proposal as they were shown it (sensitive fields masked)."""
    edited: bool = False
    """Whether their approval was an edit: it replaced the proposal (the approvals before it
    were void, and the others approved the edited one)."""
    counted: bool = True
    """False for an approval voided by a later edit: it approved a proposal that no longer
    stands."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalEntry:
    """An approval as the store keeps it: its round (the proposal it approved)."""

    by: str
    at: datetime
    round: int
    arguments: dict[str, Any]
    """What was approved, masked as the audit keeps it."""
    edited: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Approvals:
    """The approvals of one pause so far. ``version`` is what the store compares before it
    writes a new state (two approvers at once: one writes, the other reads again and adds)."""

    version: int = 0
    round: int = 0
    """How many edits replaced the proposal: approvals of an earlier round are void."""
    proposal: dict[str, Any] | None = None
    """The arguments proposed now (real values, sealed at rest) once an edit replaced the ones
    asked; None while the proposal is the question's own."""
    entries: tuple[ApprovalEntry, ...] = ()

    @property
    def counted(self) -> tuple[ApprovalEntry, ...]:
        """The approvals of the standing proposal."""
        return tuple(e for e in self.entries if e.round == self.round)

    def has_approved(self, by: str) -> bool:
        """Whether ``by`` approved the standing proposal already."""
        return any(e.by == by for e in self.counted)

    def approved(self, entry: ApprovalEntry) -> Approvals:
        """With ``entry``'s approval of the standing proposal."""
        return Approvals(
            version=self.version,
            round=self.round,
            proposal=self.proposal,
            entries=(*self.entries, entry),
        )

    def edited(self, entry: ApprovalEntry, proposal: dict[str, Any]) -> Approvals:
        """With ``proposal`` replacing the standing one and ``entry`` its first approval."""
        return Approvals(
            version=self.version,
            round=self.round + 1,
            proposal=proposal,
            entries=(*self.entries, entry),
        )

    def shown(self) -> tuple[Approval, ...]:
        """Every approval as people and the audit read it, oldest first."""
        return shown_approvals(self.entries, current_round=self.round)

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "proposal": self.proposal,
            "entries": [entry_json(e) for e in self.entries],
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any], *, version: int) -> Approvals:
        return cls(
            version=version,
            round=int(raw.get("round", 0)),
            proposal=raw.get("proposal"),
            entries=entries_of(raw.get("entries", [])),
        )


def entry_json(entry: ApprovalEntry) -> dict[str, Any]:
    return {
        "by": entry.by,
        "at": entry.at.isoformat(),
        "round": entry.round,
        "arguments": entry.arguments,
        "edited": entry.edited,
    }


def entries_of(raw: list[dict[str, Any]]) -> tuple[ApprovalEntry, ...]:
    return tuple(
        ApprovalEntry(
            by=e["by"],
            at=datetime.fromisoformat(e["at"]),
            round=int(e["round"]),
            arguments=dict(e["arguments"]),
            edited=bool(e.get("edited", False)),
        )
        for e in raw
    )


def shown_approvals(
    entries: tuple[ApprovalEntry, ...], *, current_round: int | None = None
) -> tuple[Approval, ...]:
    """``entries`` as ``Approval`` values: counted when of ``current_round`` (None: the last
    round among them)."""
    last = max((e.round for e in entries), default=0) if current_round is None else current_round
    return tuple(
        Approval(
            by=e.by,
            at=e.at.isoformat(),
            arguments=e.arguments,
            edited=e.edited,
            counted=e.round == last,
        )
        for e in entries
    )
