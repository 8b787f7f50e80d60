"""A WARNING when a request's signature is refused, so a wrong signing secret shows in the log.

Bolt answers 401 to a request whose signature is missing, stale or wrong, and logs nothing a
deployment sees: every click would fail while the log stays quiet. One warning per reason a
minute at most (a flood of forged requests must not flood the log); the next one says how many
were left out meanwhile. It names the reason and the Slack team id when the body has one, never
the body itself (a button's value is a pause id, the right to answer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from urllib.parse import parse_qs

from bot.core.clock import Clock
from channels.slack.redaction import log

EVERY: Final = timedelta(minutes=1)
STALE_AFTER: Final = timedelta(minutes=5)  # Bolt's (and Slack's) window
_TEAM_ID: Final = re.compile(r"[TE][A-Z0-9]{2,20}")


class RefusedSignatures:
    """Call :meth:`refused` with each request Bolt refused (401)."""

    def __init__(self, clock: Clock, *, every: timedelta = EVERY) -> None:
        self._clock = clock
        self._every = every
        self._last: dict[str, datetime] = {}
        self._left_out: dict[str, int] = {}

    def refused(self, body: str, headers: Mapping[str, Sequence[str]]) -> None:
        now = self._clock.now()
        reason = refusal_reason(headers, now)
        last = self._last.get(reason)
        if last is not None and now - last < self._every:
            self._left_out[reason] = self._left_out.get(reason, 0) + 1
            return
        self._last[reason] = now
        left_out = self._left_out.pop(reason, 0)
        log.warning(
            "refused a Slack request with %s (team %s): check SLACK_SIGNING_SECRET against the "
            "Slack app's Basic Information page%s",
            reason,
            team_id(body) or "unknown",
            f" ({left_out} more refused for this reason since the last one)" if left_out else "",
        )


def refusal_reason(headers: Mapping[str, Sequence[str]], now: datetime) -> str:
    """Why Bolt refused it: no signature, a stale timestamp, or a signature that does not match."""
    lowered = {name.lower(): values for name, values in headers.items()}
    signature = lowered.get("x-slack-signature") or []
    timestamp = lowered.get("x-slack-request-timestamp") or []
    if not signature or not timestamp:
        return "no signature"
    try:
        sent = datetime.fromtimestamp(int(timestamp[0]), UTC)
    except (ValueError, OverflowError, OSError):
        return "a malformed timestamp"
    if abs(now - sent) > STALE_AFTER:
        return "a stale timestamp (is this machine's clock right?)"
    return "a signature that does not match"


def team_id(body: str) -> str | None:
    """The Slack team id of an event, a slash command or an interaction; None if absent."""
    document: Any = None
    try:
        document = json.loads(body)
    except ValueError:
        form = parse_qs(body)
        found = form.get("team_id")
        if found:
            return _checked(found[0])
        payload = form.get("payload")
        if payload:
            try:
                document = json.loads(payload[0])
            except ValueError:
                return None
    if not isinstance(document, dict):
        return None
    team = document.get("team_id")
    if team is None and isinstance(document.get("team"), dict):
        team = document["team"].get("id")
    return _checked(team)


def _checked(team: object) -> str | None:
    """Only what looks like a team id reaches the log (never arbitrary text from outside)."""
    return team if isinstance(team, str) and _TEAM_ID.fullmatch(team) else None
