"""The rule for an approver's id in Slack (a user, ``U…``/``W…``, or a user group, ``S…``).

Light on purpose: the desk's settings check it before Slack's libraries load
(``bot.cli.preflight``); ``channels.slack.approvers`` looks the groups up.
"""

from __future__ import annotations

import re
from typing import Final

USER_ID: Final = re.compile(r"[UW][A-Z0-9]{2,40}")
GROUP_ID: Final = re.compile(r"S[A-Z0-9]{2,40}")


def is_approver_id(value: str) -> bool:
    return bool(USER_ID.fullmatch(value) or GROUP_ID.fullmatch(value))
