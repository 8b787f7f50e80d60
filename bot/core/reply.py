"""Reading free-text replies: the input of an interpreter and its closed outcome."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from bot.core.dtos import ToolCallApprovalAsk

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyInput:
    """The pause's original question and the person's reply, as it came."""

    ask: ToolCallApprovalAsk
    reply: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyInterpretation(Generic[T]):
    """Either understood (``value`` is the answer) or not understood (``reason`` says why).

    Build it with ``ReplyInterpretation.understood(...)`` or ``.not_understood(reason=...)``.
    ``language`` is the language the reply was read in (a code such as "de"), when the
    interpreter recognised one: a reply not understood is then answered in it.
    """

    is_understood: bool
    value: T | None = None
    reason: str | None = None
    language: str | None = None

    @staticmethod
    def understood(value: Any, *, language: str | None = None) -> ReplyInterpretation[Any]:
        return ReplyInterpretation(is_understood=True, value=value, language=language)

    @staticmethod
    def not_understood(*, reason: str, language: str | None = None) -> ReplyInterpretation[Any]:
        if not reason or not reason.strip():
            raise ValueError("a not-understood interpretation needs a reason")
        return ReplyInterpretation(is_understood=False, reason=reason, language=language)
