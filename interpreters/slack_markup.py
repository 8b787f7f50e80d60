"""Slack's markup as it arrives in a message event, made plain for reading.

Slack escapes ``&``, ``<`` and ``>`` in message text (``&amp;``, ``&lt;``, ``&gt;``) and quotes a
line with ``&gt; ``. Mentions (``<@U…>``) and links (``<https://…|label>``) stay as they are:
the reading knows them as tokens.
"""

from __future__ import annotations

import re

_ENTITY = re.compile(r"&(amp|lt|gt);", re.IGNORECASE)
_CHARACTERS = {"amp": "&", "lt": "<", "gt": ">"}
_QUOTE = re.compile(r"^[^\S\n]*(?:&gt;|>)", re.IGNORECASE)


def unquoted(text: str) -> tuple[str, str]:
    """What the person said, and the lines they quoted, with Slack's entities read."""
    said: list[str] = []
    quoted: list[str] = []
    for line in text.split("\n"):
        match = _QUOTE.match(line)
        if match is None:
            said.append(line)
        else:
            quoted.append(line[match.end() :])
    return _plain("\n".join(said)), _plain("\n".join(quoted))


def _plain(text: str) -> str:
    return _ENTITY.sub(lambda match: _CHARACTERS[match.group(1).lower()], text)
