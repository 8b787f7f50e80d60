"""The one rule for a Slack conversation id, shared by ``slack_channel`` and the desk's settings.

A conversation id is its kind's letter (``C`` a channel, ``G`` a private channel or group, ``D``
a direct message) then 2 to 40 upper-case letters and digits, as Slack writes them
(``C0123456789``). Two checks that differ would let a setting pass one and fail the other later,
with a traceback instead of a line naming the setting.
"""

from __future__ import annotations

import re
from typing import Final

CHANNEL_KINDS: Final = "CG"
"""A channel, public or private: where questions can be posted for several people."""
ANY_KIND: Final = "CGD"
"""A channel or a direct message."""
_BODY: Final = re.compile(r"[A-Z0-9]{2,40}")


def is_conversation_id(value: str, *, kinds: str = CHANNEL_KINDS) -> bool:
    """Whether ``value`` is a Slack conversation id of one of ``kinds`` (its first letter)."""
    return len(value) > 1 and value[0] in kinds and bool(_BODY.fullmatch(value, 1))
