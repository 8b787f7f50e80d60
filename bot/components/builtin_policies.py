"""Built-in approval policies for the common cases, each a few lines on the ``@policy`` interface
(examples of writing one), and two ways to compose them.

Each factory returns a new ``@policy`` class, named as you say (``name`` ends in ``-policy``):

```python
small = approve_below("amount", 50, name="small-refund-policy")
anns = allow_requesters(["U0ANN"], name="ann-policy")
office_hours = within_hours(time(9), time(17), tz="Europe/Berlin", name="office-hours-policy")
refunds = all_of(small, office_hours, name="refund-policy")   # approves when both approve
```

Each one approves when its condition holds and otherwise asks a person: none of them rejects,
so composing them can only narrow what approves itself. Misuse raises ``SetupError`` at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import time, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.components.specs import SPEC_ATTRIBUTE, PolicySpec
from bot.core.errors import SetupError
from bot.core.policy import PolicyAsk, PolicyDecision, PolicyOutcome

__all__ = [
    "all_of",
    "allow_requesters",
    "allow_tenants",
    "approve_below",
    "first_of",
    "within_hours",
]


def approve_below(
    field: str, limit: float, *, name: str, description: str = "", inclusive: bool = False
) -> type:
    """Approves a call whose numeric argument ``field`` is under ``limit`` (at most, with
    ``inclusive``): "under 50.00". A missing, non-numeric or non-finite value asks."""
    if isinstance(limit, bool) or not isinstance(limit, int | float) or not math.isfinite(limit):
        raise SetupError(f"approve_below {name}: limit must be a finite number, not {limit!r}")

    def decide(self: object, ask: PolicyAsk) -> PolicyDecision:
        value = ask.arguments.get(field)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return PolicyOutcome.ask()
        if math.isfinite(value) and (value < limit or (inclusive and value == limit)):
            return PolicyOutcome.approve(f"{'at most' if inclusive else 'under'} {limit:.2f}")
        return PolicyOutcome.ask()

    what = description or f"Approves calls whose {field} is under {limit:.2f}"
    return _policy(name, what, decide)


def allow_requesters(owner_ids: Iterable[str], *, name: str, description: str = "") -> type:
    """Approves a call made for one of ``owner_ids`` (who asked for the work)."""
    allowed = _ids(owner_ids, name, "allow_requesters")

    def decide(self: object, ask: PolicyAsk) -> PolicyDecision:
        if ask.owner_id in allowed:
            return PolicyOutcome.approve(f"requested by {ask.owner_id}")
        return PolicyOutcome.ask()

    return _policy(name, description or "Approves the calls of listed requesters", decide)


def allow_tenants(tenant_ids: Iterable[str], *, name: str, description: str = "") -> type:
    """Approves a call in one of ``tenant_ids``."""
    allowed = _ids(tenant_ids, name, "allow_tenants")

    def decide(self: object, ask: PolicyAsk) -> PolicyDecision:
        if ask.tenant_id in allowed:
            return PolicyOutcome.approve(f"tenant {ask.tenant_id}")
        return PolicyOutcome.ask()

    return _policy(name, description or "Approves the calls of listed tenants", decide)


def within_hours(
    start: time,
    end: time,
    *,
    name: str,
    tz: str | tzinfo = "UTC",
    weekdays: Sequence[int] = (0, 1, 2, 3, 4, 5, 6),
    description: str = "",
) -> type:
    """Approves a call asked (by the App's clock) from ``start`` until before ``end`` local
    time in ``tz`` on ``weekdays`` (Monday 0); a window may cross midnight (22:00-06:00)."""
    zone = _zone(tz, name)
    days = frozenset(weekdays)
    if not days or not days <= set(range(7)) or start == end:
        raise SetupError(f"within_hours {name}: give weekdays 0-6 and a start apart from end")
    window = f"{start:%H:%M}-{end:%H:%M} {zone}"

    def decide(self: object, ask: PolicyAsk) -> PolicyDecision:
        local = ask.asked_at.astimezone(zone)
        at, day = local.time(), local.weekday()
        if start > end and at < end:
            day = (day - 1) % 7  # after midnight: the window opened the day before
        inside = start <= at < end if start < end else at >= start or at < end
        if inside and day in days:
            return PolicyOutcome.approve(f"asked within {window}")
        return PolicyOutcome.ask()

    return _policy(name, description or f"Approves calls asked within {window}", decide)


def all_of(*policies: type, name: str, description: str = "") -> type:
    """Rejects if any part rejects, approves if every part approves (the reasons joined with
    "; "), else asks."""
    return _composed("all", policies, name, description or "Approves when all of its parts do")


def first_of(*policies: type, name: str, description: str = "") -> type:
    """The first part's decision that is not to ask (in order), else asks."""
    return _composed("first", policies, name, description or "The first of its parts to decide")


def _policy(name: str, description: str, decide: Any) -> type:
    cls = type(_class_name(name), (), {"decide": decide, "__module__": __name__})
    setattr(cls, SPEC_ATTRIBUTE, PolicySpec(name=name, description=description, cls=cls))
    return cls


def _composed(
    combine: Literal["all", "first"], parts: Sequence[type], name: str, description: str
) -> type:
    if not parts:
        raise SetupError(f"{combine}_of {name}: name the policies it composes")
    cls = type(_class_name(name), (), {"__module__": __name__})
    spec = PolicySpec(
        name=name, description=description, cls=cls, parts=tuple(parts), combine=combine
    )
    setattr(cls, SPEC_ATTRIBUTE, spec)
    return cls


def _ids(ids: Iterable[str], name: str, factory: str) -> frozenset[str]:
    if isinstance(ids, str):
        raise SetupError(f"{factory} {name}: a list of ids, not one string")
    allowed = frozenset(ids)
    if not allowed or not all(isinstance(i, str) and i for i in allowed):
        raise SetupError(f"{factory} {name}: name at least one id (non-empty strings)")
    return allowed


def _zone(tz: str | tzinfo, name: str) -> tzinfo:
    if not isinstance(tz, str):
        return tz
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise SetupError(f"within_hours {name}: unknown time zone {tz!r}") from None


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-") if part) or "Policy"
