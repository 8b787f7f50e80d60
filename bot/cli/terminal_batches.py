"""A batch at the terminal's prompt: ``list`` shows the questions waiting, numbered;
``approve all`` / ``approve 1,3`` approve them at once and ``reject all: reason`` /
``reject 2: reason`` reject them with one reason each records (``App.answer_all``). Each
question is approved as the list showed it (its round, ``shown_rounds``): one edited since is
refused and the rest go on. What became of each is one line in the kit's words
(``channels.kit.batches``): approved, skipped (answered elsewhere meanwhile), refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bot import AnswerOutcome, App, PendingPause
from channels.kit.batches import BatchAction, batch_lines
from channels.kit.texts import NO_LONGER_AVAILABLE

LIST_WORDS: Final = frozenset({"list", "ls"})
"""What lists the questions waiting, numbered for a batch."""
_BATCH = re.compile(
    r"^\s*(?P<action>approve|reject)\s+(?P<which>all|\d+(?:\s*,\s*\d+)*)\s*(?::\s*(?P<reason>.*))?$",
    re.IGNORECASE,
)
REASON_NEEDED: Final = "A batch is rejected with one reason: reject all: <reason>"
TONE_MARKS: Final = {"ok": "=", "skipped": "~", "bad": "!"}


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchCommand:
    """A batch typed at the prompt: which questions (None: all), approve or reject, why."""

    action: BatchAction
    numbers: tuple[int, ...] | None
    reason: str | None


def batch_command(line: str) -> BatchCommand | None:
    """The batch ``line`` asks for (``approve all``, ``approve 1,3``, ``reject 2: why``), or
    None when it is not a batch (a reply to the first question)."""
    found = _BATCH.match(line)
    if found is None:
        return None
    which = found["which"].lower()
    numbers = None if which == "all" else tuple(int(n) for n in which.split(","))
    reason = (found["reason"] or "").strip() or None
    action: BatchAction = "approve" if found["action"].lower() == "approve" else "reject"
    return BatchCommand(action=action, numbers=numbers, reason=reason)


def question_line(pause: PendingPause) -> str:
    """One waiting question in a list: its tool and arguments (as the model proposed them)."""
    return f"{pause.ask.tool} {json.dumps(pause.proposed_arguments, ensure_ascii=False)}"


def listed(pending: Sequence[PendingPause]) -> list[str]:
    """The questions waiting, numbered as a batch names them."""
    return [f"  [{n}] {question_line(p)}" for n, p in enumerate(pending, start=1)]


def chosen(command: BatchCommand, pending: Sequence[PendingPause]) -> list[PendingPause] | str:
    """The questions ``command`` names, or what to tell the person (a number not listed, a
    rejection without its reason): nothing is answered then."""
    if command.action == "reject" and command.reason is None:
        return REASON_NEEDED
    if command.numbers is None:
        return list(pending)
    unknown = [n for n in command.numbers if not 1 <= n <= len(pending)]
    if unknown:
        return (
            f"No question {unknown[0]} waits: type list to see them numbered (1 to {len(pending)})."
        )
    return [pending[n - 1] for n in dict.fromkeys(command.numbers)]


async def answer_batch(
    app: App,
    command: BatchCommand,
    picked: Sequence[PendingPause],
    *,
    tenant_id: str,
    by: str,
) -> tuple[list[AnswerOutcome], list[str]]:
    """Answer ``picked`` as ``command`` says, each as the list showed it; the outcomes and a
    line for each in the kit's words."""
    ids = [p.pause_id for p in picked if p.pause_id is not None]
    decision: dict[str, object] = {"approved": command.action == "approve"}
    if command.reason is not None and command.action == "reject":
        decision["reason"] = command.reason
    outcomes = await app.answer_all(
        ids,
        tenant_id=tenant_id,
        by=by,
        decision=decision,
        shown_rounds={p.pause_id: p.shown_round for p in picked if p.pause_id is not None},
    )
    titles = {p.pause_id: question_line(p) for p in picked}

    def title(outcome: AnswerOutcome) -> str:
        pause = outcome.pause
        return NO_LONGER_AVAILABLE if pause is None else titles.get(pause.pause_id, pause.pause_id)

    def name(who: str) -> str:
        return "you" if who == by else who

    lines = batch_lines(outcomes, command.action, title=title, name=name)
    return outcomes, [f"  {TONE_MARKS[line.tone]} {line.title}: {line.text}" for line in lines]
