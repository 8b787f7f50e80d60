"""What a reply in a test set means: approve, reject (with its reason), or no clear answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Expect:
    """``approved`` None means the reply gives no clear answer: it must not be understood."""

    approved: bool | None
    reason: str | None = None


APPROVE = Expect(approved=True)
REJECT = Expect(approved=False)
UNCLEAR = Expect(approved=None)


def approve(reason: str) -> Expect:
    return Expect(approved=True, reason=reason)


def reject(reason: str) -> Expect:
    return Expect(approved=False, reason=reason)


Case = tuple[str, str, Expect]
"""(category, reply, what it means)."""
