"""The question's context: what the person asked, and the model's words before its call.

``ToolCallApprovalAsk.request`` and ``stated_reason`` let a channel show why an agent wants to
do what it asks. They are masked once, before they are kept, so every reader (Slack, the web,
the audit, a reply interpreter's model) reads the same: a sensitive argument's value written
out in them, and every value a PII policy of the application or the workflow finds (whatever
its action: these texts are shown to people and read by models alike), is the mask.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from bot.core.pii import PiiAction, PiiPolicy, SensitiveFields
from bot.core.sensitive import MASK

MAX_CONTEXT: Final = 2000
"""A context text is cut at this many characters (with an ellipsis)."""


def masked_context(
    text: str | None,
    *,
    policies: Sequence[PiiPolicy],
    arguments: Mapping[str, Any],
    sensitive: frozenset[str],
) -> str | None:
    """``text`` as it may be kept and shown; None for no text."""
    if text is None or not text.strip():
        return None
    said = " ".join(text.split()) if "\n" not in text else text.strip()
    hidden = sorted(
        (str(v) for k, v in arguments.items() if k in sensitive and len(str(v)) >= 3),
        key=len,
        reverse=True,
    )
    for value in hidden:
        said = said.replace(value, MASK)
    said = _masked_by_policies(said, policies)
    return said if len(said) <= MAX_CONTEXT else said[: MAX_CONTEXT - 1] + "…"


def _masked_by_policies(text: str, policies: Sequence[PiiPolicy]) -> str:
    spans: list[tuple[int, int]] = []
    for policy in policies:
        detector = policy.detector
        if isinstance(detector, SensitiveFields) or policy.action is PiiAction.ALLOW_UNMASKED:
            continue
        spans += [(m.start, m.end) for m in detector.find(text)]
    pieces, position = [], 0
    for start, end in sorted(spans):
        if start < position:
            continue  # inside a value masked already
        pieces += [text[position:start], MASK]
        position = end
    return "".join([*pieces, text[position:]])


def graph_context(
    state: Any, *, tool: str, arguments: Mapping[str, Any], call_id: str = ""
) -> tuple[str | None, str | None]:
    """(what the person asked, the model's words in the turn that made the call) read from an
    attached graph's state: the latest human message before that turn, and that turn's text.
    A state without messages (a plain graph) has none of them."""
    messages = state.get("messages") if isinstance(state, Mapping) else None
    if not isinstance(messages, list):
        return None, None
    turn = _calling_turn(messages, tool=tool, arguments=arguments, call_id=call_id)
    before = messages[:turn] if turn is not None else messages
    human = next((m for m in reversed(before) if _kind(m) == "human"), None)
    reason = _text(messages[turn]) if turn is not None else None
    return (_text(human) if human is not None else None), reason


def _calling_turn(
    messages: list[Any], *, tool: str, arguments: Mapping[str, Any], call_id: str
) -> int | None:
    """The index of the AI message that called ``tool`` (by its call id, else by its name and
    arguments: a batched request names no call id), else of the last AI message."""
    last_ai = None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if _kind(message) != "ai":
            continue
        last_ai = index if last_ai is None else last_ai
        for call in getattr(message, "tool_calls", None) or []:
            if (call_id and call.get("id") == call_id) or (
                call.get("name") == tool and call.get("args") == dict(arguments)
            ):
                return index
    return last_ai


def _kind(message: Any) -> str | None:
    kind = getattr(message, "type", None)
    return kind if isinstance(kind, str) else None


def _text(message: Any) -> str | None:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content or None
    if isinstance(content, list):
        said = " ".join(
            str(b.get("text")) for b in content if isinstance(b, dict) and b.get("text")
        )
        return said or None
    return None
