"""Scores the keyword interpreter on the reply sets: per language, replies, misreads, share
read as meant. Run it on its own::

    .venv/bin/python -m tests.interpreters.score          # every set, all languages read
    .venv/bin/python -m tests.interpreters.score -v       # and each reply not read as meant

A misread is a verdict the reply does not mean (the opposite one, or any verdict where the
reply gives no clear answer); read as meant is the meant verdict with the meant reason, or
not understood where the reply gives no clear answer.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Protocol

from bot.core.dtos import ToolCallApprovalAsk, ToolCallApprovalDecision
from bot.core.reply import ReplyInput, ReplyInterpretation
from interpreters import KeywordReplyInterpreter

SET_LANGUAGES = ("de", "fr", "es", "pt", "nl", "it", "ja")
ASK = ToolCallApprovalAsk(
    tool="refund-card-tool", arguments={"amount": 100, "customer": "c-17"}, call_id="c1"
)


class Meaning(Protocol):
    @property
    def approved(self) -> bool | None: ...
    @property
    def reason(self) -> str | None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    language: str
    replies: int
    misreads: tuple[str, ...]
    missed: tuple[str, ...]  # not read as meant, yet no misread

    @property
    def read_as_meant(self) -> float:
        return 1 - (len(self.misreads) + len(self.missed)) / self.replies


def cases_of(language: str) -> Sequence[tuple[str, str, Meaning]]:
    if language == "en":
        from tests.interpreters.test_keyword import CASES

        return CASES
    cases: Sequence[tuple[str, str, Meaning]] = import_module(
        f"tests.interpreters.sets.{language}"
    ).CASES
    return cases


def verdict(result: ReplyInterpretation[ToolCallApprovalDecision]) -> bool | None:
    if not result.is_understood or result.value is None:
        return None
    return result.value.approved


def is_misread(result: ReplyInterpretation[ToolCallApprovalDecision], meant: Meaning) -> bool:
    read = verdict(result)
    return read is not None and read is not meant.approved


def is_as_meant(result: ReplyInterpretation[ToolCallApprovalDecision], meant: Meaning) -> bool:
    if meant.approved is None:
        return not result.is_understood
    return result.value == ToolCallApprovalDecision(approved=meant.approved, reason=meant.reason)


def score(language: str, interpreter: KeywordReplyInterpreter | None = None) -> Score:
    reader = interpreter or KeywordReplyInterpreter()
    misreads: list[str] = []
    missed: list[str] = []
    cases = cases_of(language)
    for _, reply, meant in cases:
        result = reader.interpret(ReplyInput(ask=ASK, reply=reply))
        if is_misread(result, meant):
            misreads.append(reply)
        elif not is_as_meant(result, meant):
            missed.append(reply)
    return Score(language=language, replies=len(cases), misreads=tuple(misreads),
                 missed=tuple(missed))  # fmt: skip


def main(argv: Sequence[str]) -> int:
    verbose = "-v" in argv
    print(f"{'language':<10}{'replies':>8}{'misreads':>10}{'read as meant':>15}")
    for language in ("en", *SET_LANGUAGES):
        result = score(language)
        print(f"{language:<10}{result.replies:>8}{len(result.misreads):>10}"
              f"{result.read_as_meant:>15.0%}")  # fmt: skip
        if verbose:
            for reply in result.misreads:
                print(f"    MISREAD {reply!r}")
            for reply in result.missed:
                print(f"    missed  {reply!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
