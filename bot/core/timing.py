"""Time on a question: when to remind, escalate, and when nobody answering ends it.

``PauseTiming`` goes on a role (``@channel_role(..., timing=...)``) and can be overridden per
tool (``@tool(..., timing=...)``). Durations count from when the question was asked, on the
App's clock. Expiry is its own resolution (``PauseResolution.EXPIRED``): nobody answering is
never a rejection by a person.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import timedelta


class OnExpiry(enum.Enum):
    """What the waiting step gets when its question expires."""

    TOOL_ERROR = "tool-error"
    """The model reads a tool error saying nobody approved the call in time (and when)."""
    FAIL = "fail"
    """The step fails with ``PauseExpiredError``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PauseTiming:
    """Every field optional; the assembly checks that they make sense together
    (``[timing.*]`` rules)."""

    remind_after: timedelta | None = None
    remind_every: timedelta | None = None
    escalate_after: timedelta | None = None
    expire_after: timedelta | None = None
    on_expiry: OnExpiry = OnExpiry.TOOL_ERROR

    def problems(self) -> list[tuple[str, str]]:
        """The rules this timing breaks, as (rule, what is wrong)."""
        found: list[tuple[str, str]] = []
        durations = {
            "remind_after": self.remind_after,
            "remind_every": self.remind_every,
            "escalate_after": self.escalate_after,
            "expire_after": self.expire_after,
        }
        for name, value in durations.items():
            if value is not None and value <= timedelta(0):
                found.append(("timing.positive", f"{name} must be longer than zero"))
        if self.remind_every is not None and self.remind_after is None:
            found.append(("timing.remind-every", "remind_every needs remind_after"))
        if self.expire_after is not None:
            for name in ("remind_after", "escalate_after"):
                value = durations[name]
                if value is not None and value >= self.expire_after:
                    found.append(
                        (
                            "timing.after-expiry",
                            f"{name} ({value}) is not before expire_after ({self.expire_after})",
                        )
                    )
        return found
