"""``python -m bot.desk.langgraph_desk``: an attached LangChain agent answered from the terminal."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from bot.desk.langgraph_desk import run

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("answers", "ends"),
    [
        (["approve"], "refunded 120.00 on order A-1001; booked 86.50 for team lunch."),
        (
            ["maybe", "reject: not this one"],
            "with reason: not this one); booked 86.50 for team lunch.",
        ),
    ],
)
async def test_the_refund_is_asked_and_answered_at_the_prompt(
    answers: list[str], ends: str
) -> None:
    out, given = io.StringIO(), iter(answers)

    async def next_line() -> str | None:
        return next(given, None)

    assert await run(out, next_line) == 0

    said = out.getvalue()
    question = "? Refund 120.00 to the card of order A-1001?\n  Asked by you through desk-agent\n"
    assert question in said  # the role's question template, the values as a person reads them
    assert "  Order ID: A-1001\n  Amount: 120.00\n  Answers: approve, reject, edit\n" in said
    asked = said[said.index("? ") : said.index("> ")]
    assert "refund-card-tool" not in asked  # no tool id in the question
    assert said.count("? ") == 1  # the expense is booked without asking
    assert said.rstrip().endswith(ends)
    assert ("Not understood" in said) is (answers[0] == "maybe")


def test_it_runs_as_a_process_with_piped_answers() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot.desk.langgraph_desk"],
        input="approve\n",
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "answer: Here is what happened: refunded 120.00 on order A-1001; "
        "booked 86.50 for team lunch."
    )


async def test_without_answers_it_stays_paused() -> None:
    """(Called in this process: the module as a process is the test above.)"""
    out = io.StringIO()

    async def no_more_lines() -> str | None:
        return None

    assert await run(out, no_more_lines) == 0
    assert out.getvalue().rstrip().endswith("No more answers: the agent stays paused.")
