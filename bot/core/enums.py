"""Closed sets of values of the public API (UPPER_CASE members, string values)."""

from __future__ import annotations

from enum import StrEnum


class DecidedBy(StrEnum):
    """How a reply interpreter reads a free-text reply."""

    CODE = "CODE"
    MODEL = "MODEL"


class PauseAnswerer(StrEnum):
    """Who may answer a role's pauses."""

    THREAD_OWNER = "THREAD_OWNER"
    CHANNEL = "CHANNEL"


class PauseStatus(StrEnum):
    PENDING = "PENDING"
    RESOLVED = "RESOLVED"
    TAKEN = "TAKEN"
    CANCELLED = "CANCELLED"


class PauseResolution(StrEnum):
    DECIDED = "DECIDED"
    REPLIED = "REPLIED"
    WITHDRAWN = "WITHDRAWN"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"
    """Nobody answered before the role's (or tool's) ``expire_after``: never a rejection."""


class ExecutionStatus(StrEnum):
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    @property
    def ended(self) -> bool:
        """COMPLETED, FAILED or CANCELLED: nothing of the execution waits or runs any more."""
        return self in (
            ExecutionStatus.COMPLETED,
            ExecutionStatus.FAILED,
            ExecutionStatus.CANCELLED,
        )
