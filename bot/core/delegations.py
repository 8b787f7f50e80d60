"""Handing questions on: a waiting question reassigned to a person, and standing delegations
("while I'm away, Bob answers my questions") — what they are, and nothing else (no I/O).

A reassignment names one more person who may answer one waiting question; whoever could answer
it still may. A standing delegation lets its delegate answer, until its end, every question its
delegator may answer (the channel says who that is: approvers, user groups), new and waiting
ones alike. Neither ever lets anyone answer their own request: the requester handed a question
is refused, as under separation of duties.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

HandoverKind = Literal["reassigned", "delegation"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Handover:
    """A question handed on: ``by`` handed it to ``to`` (``PauseView.handovers``,
    ``PauseAuditEntry.handovers``)."""

    by: str
    """Who handed it on: the approver who reassigned it, or the delegator."""
    to: str
    """Who may answer it since."""
    at: str
    """When, ISO 8601 on the application's clock."""
    kind: HandoverKind = "reassigned"
    """``reassigned`` (one question, by an approver), or ``delegation`` (a standing delegation
    its delegate answered it under)."""
    delegation_id: str | None = None
    """The standing delegation, for ``kind="delegation"``."""

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "to": self.to,
            "at": self.at,
            "kind": self.kind,
            "delegation_id": self.delegation_id,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Handover:
        return cls(
            by=raw["by"],
            to=raw["to"],
            at=raw["at"],
            kind=raw.get("kind", "reassigned"),
            delegation_id=raw.get("delegation_id"),
        )


DelegationChangeKind = Literal["started", "ended"]
TellingTaken = Literal["first", "again"]
"""Who takes the telling of a change: the ``first`` to, or ``again`` after a taker that
never recorded it told (it died: it may or may not have told it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DelegationChange:
    """A standing delegation started (``App.delegate``) or ended early
    (``App.end_delegation``): what ``App.on_delegation`` handlers are told, so every channel
    tells the delegate."""

    kind: DelegationChangeKind
    delegation: Delegation
    """The delegation as it now stands (``ended_at`` / ``ended_by`` set once ended)."""
    again: bool = False
    """It may have been told already: a process took its telling and died before recording
    it told (told at least once). A channel that can looks before it says it twice."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NewDelegation:
    """A standing delegation about to be stored."""

    delegation_id: str
    tenant_id: str
    delegator: str
    delegate: str
    created_by: str
    created_at: datetime
    ends_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Delegation:
    """A standing delegation: ``delegate`` may answer what ``delegator`` may answer, in
    ``tenant_id``, from ``created_at`` until ``ends_at`` (or until it was ended)."""

    delegation_id: str
    tenant_id: str
    delegator: str
    delegate: str
    created_by: str
    created_at: datetime
    ends_at: datetime
    ended_at: datetime | None = None
    ended_by: str | None = None

    def is_active(self, now: datetime) -> bool:
        """Whether it applies at ``now``: not ended, and before its end."""
        return self.ended_at is None and self.created_at <= now < self.ends_at

    def line(self, now: datetime) -> str:
        """One line for people (the CLI's ``delegations list``)."""
        state = "active" if self.is_active(now) else "ended"
        return (
            f"{self.delegation_id}  {state}  tenant {self.tenant_id}  {self.delegator} → "
            f"{self.delegate}  until {self.ends_at.isoformat()}"
        )
