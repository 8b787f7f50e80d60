"""Reads a button's JSON value, as a chat app sends it back: ``{"approved": true}``."""

from __future__ import annotations

import json

from pydantic import ValidationError

from bot.components.decorators import reply_interpreter
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import DecidedBy
from bot.core.reply import ReplyInput, ReplyInterpretation

_ECHO_LIMIT = 100
_KEYS = frozenset({"approved", "reason"})


@reply_interpreter(
    name="button-value-reply-interpreter",
    description='Reads an approval button\'s JSON value, {"approved": true|false, "reason": "..."}',
    decided_by=DecidedBy.CODE,
)
class ButtonValueReplyInterpreter:
    """Reads ``{"approved": <bool>}`` with an optional string ``"reason"``.

    * A JSON object with a boolean ``"approved"`` (and at most a string or null
      ``"reason"``) is understood; a blank reason counts as none.
    * Valid JSON of any other shape (an array, a string, ``{"approved": "yes"}``, an
      unknown key such as ``"override_arguments"``, a reason too long for a decision)
      is not understood; the reason echoes the reply, cut to about 100 characters.
    * A text that is not JSON at all raises ``ValueError``: a button value is written
      by code, so free text here is a crash, not a person's answer (the spec's
      ``JSON.parse``). The runtime turns the throw into an unreadable reply
      (``pause.uninterpretable-reply``) with this error as its cause, and the pause
      stays pending.

    ``override_arguments`` is never set.
    """

    def interpret(self, input: ReplyInput) -> ReplyInterpretation[ToolCallApprovalDecision]:
        try:
            value: object = json.loads(input.reply)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"a button value must be JSON ({error}): {_echo(input.reply)}"
            ) from error
        decision = _decision(value)
        if decision is None:
            return ReplyInterpretation.not_understood(
                reason=f"not a button value: {_echo(input.reply)}"
            )
        return ReplyInterpretation.understood(decision)


def _decision(value: object) -> ToolCallApprovalDecision | None:
    if not isinstance(value, dict) or not set(value) <= _KEYS:
        return None
    approved, reason = value.get("approved"), value.get("reason")
    if not isinstance(approved, bool) or not isinstance(reason, str | None):
        return None
    try:
        return ToolCallApprovalDecision(
            approved=approved, reason=reason if reason and reason.strip() else None
        )
    except ValidationError:  # a reason longer than a decision allows
        return None


def _echo(reply: str) -> str:
    return reply if len(reply) <= _ECHO_LIMIT else f"{reply[: _ECHO_LIMIT - 1]}…"
