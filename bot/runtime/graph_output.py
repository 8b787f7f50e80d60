"""What a finished run said: a workflow's ``text``, or an attached graph's last message."""

from __future__ import annotations

import json
from typing import Any


def answer_of(output: Any) -> str:
    """The answer of a finished run's ``output`` (unescaped; blank when it said nothing)."""
    if isinstance(output, dict) and isinstance(output.get("text"), str):
        text: str = output["text"]
        return text
    if isinstance(output, dict) and isinstance(output.get("messages"), list):
        return last_said(output["messages"])
    if output is None:
        return ""
    return json.dumps(output, ensure_ascii=False, default=str)


def last_said(messages: list[Any]) -> str:
    """An attached agent's answer: the text of the last message of its final state."""
    for message in reversed(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and content.strip():
            return content
        if isinstance(content, list):  # content blocks: their text parts
            said = " ".join(
                str(b.get("text")) for b in content if isinstance(b, dict) and b.get("text")
            )
            if said.strip():
                return said
    return ""
