"""The thread id of an execution started from Slack: which Slack thread it lives in.

``slack:<team>:<channel>:<thread_ts>`` — the thread's owner is the Slack user who started it,
its approval messages (for THREAD_OWNER roles) and its final answer are posted in that thread.
Any other thread id is not a Slack one: its approval messages go to the channel's conversation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

PREFIX: Final = "slack"
_TEAM: Final = re.compile(r"[A-Z0-9]{1,32}")
_CHANNEL: Final = re.compile(r"[CDG][A-Z0-9]{1,32}")
_TS: Final = re.compile(r"\d{1,12}\.\d{1,9}")


@dataclass(frozen=True, slots=True, kw_only=True)
class SlackThread:
    """A Slack thread: the conversation and the ``ts`` of its first message."""

    team: str
    channel: str
    ts: str

    def thread_id(self) -> str:
        return f"{PREFIX}:{self.team}:{self.channel}:{self.ts}"

    @staticmethod
    def parse(thread_id: str) -> SlackThread | None:
        """The Slack thread an execution's thread id names; ``None`` when it is not one."""
        parts = thread_id.split(":")
        if len(parts) != 4 or parts[0] != PREFIX:
            return None
        _, team, channel, ts = parts
        if not (_TEAM.fullmatch(team) and _CHANNEL.fullmatch(channel) and _TS.fullmatch(ts)):
            return None
        return SlackThread(team=team, channel=channel, ts=ts)
