"""Where a policy routes a question (``PolicyOutcome.route``): other approvers, another
conversation, a tighter ``PauseTiming``, more approvals — kept with the pause, so every
instance, every sweep and every channel asks, nudges and counts as routed (no I/O).

Fail-closed: a route only narrows. Its approvers replace the channel's (who else may answer is
the channel's rule: none of the channel's own approvers answers a routed question unless
named); its timing is refused unless each of its times is at most the one it replaces; its
``required_approvals`` unless it is at least the role's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from bot.core.timing import OnExpiry, PauseTiming

_DURATIONS = ("remind_after", "remind_every", "escalate_after", "expire_after")


@dataclass(frozen=True, slots=True, kw_only=True)
class PauseRoute:
    """Whom a question is asked, where, and how soon it is nudged and expires."""

    approvers: tuple[str, ...] = ()
    """Who may answer it instead of the channel's approvers (the channel's ids: Slack user
    and group ids, the web's names); empty: the channel's."""
    conversation: str | None = None
    """Where it is asked instead of the channel's conversation (a Slack channel id); None:
    the channel's."""
    timing: PauseTiming | None = None
    """Its reminders, escalation and expiry instead of the tool's or role's; None: theirs.
    What the step gets once it expired (``on_expiry``) stays the tool's or role's."""
    required_approvals: int | None = None
    """How many distinct approvers must approve it instead of the role's
    ``required_approvals`` (never fewer); None: the role's."""

    @property
    def is_empty(self) -> bool:
        return (
            not self.approvers
            and self.conversation is None
            and self.timing is None
            and self.required_approvals is None
        )

    def encode(self) -> str:
        """As stored with the pause (``cs_pauses.route``)."""
        timing = None
        if self.timing is not None:
            timing = {
                name: None
                if getattr(self.timing, name) is None
                else getattr(self.timing, name).total_seconds()
                for name in _DURATIONS
            } | {"on_expiry": self.timing.on_expiry.value}
        document: dict[str, Any] = {
            "approvers": list(self.approvers),
            "conversation": self.conversation,
            "timing": timing,
        }
        if self.required_approvals is not None:
            document["required_approvals"] = self.required_approvals
        return json.dumps(document, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str | None) -> PauseRoute | None:
        """The route stored as ``text``; None for none."""
        if not text:
            return None
        document: dict[str, Any] = json.loads(text)
        raw = document.get("timing")
        timing = None
        if isinstance(raw, dict):
            durations = {
                name: None if raw.get(name) is None else timedelta(seconds=float(raw[name]))
                for name in _DURATIONS
            }
            timing = PauseTiming(**durations, on_expiry=OnExpiry(raw["on_expiry"]))
        return cls(
            approvers=tuple(document.get("approvers") or ()),
            conversation=document.get("conversation"),
            timing=timing,
            required_approvals=_count(document.get("required_approvals")),
        )


def _count(value: object) -> int | None:
    """A stored approval count; None when absent (a route kept before counts were routed)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def looser_times(routed: PauseTiming, current: PauseTiming | None) -> list[str]:
    """The times of ``routed`` that are not tighter than ``current``'s (a time ``current``
    has and ``routed`` drops, or makes longer); empty when ``routed`` only narrows."""
    if current is None:
        return []
    looser = []
    for name in _DURATIONS:
        was, now = getattr(current, name), getattr(routed, name)
        if was is not None and (now is None or now > was):
            looser.append(name)
    return looser
