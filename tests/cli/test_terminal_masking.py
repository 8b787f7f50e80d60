"""The terminal shows a question as every other channel does: ``Sensitive`` fields masked.

Run as a person runs a terminal desk: a process whose standard output is the terminal, the
answer typed on standard input, for our own agent's tool and for an attached LangGraph agent.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot.core.sensitive import MASK
from tests.cli.processes import REPO, TIMEOUT_SECONDS
from tests.cli.terminal_cards import CARD_NUMBER

KINDS = {"native": "charge-card-tool", "graph": "charge_card"}


@pytest.fixture(scope="module")
def desks() -> tuple[dict[str, list[str]], str]:
    """Both desks run by one process, one after the other (its imports cost seconds): each
    kind's lines, and everything it wrote."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.cli.terminal_cards", *KINDS],
        input="approve\n" * len(KINDS),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        if line.startswith("== "):
            said[line.removeprefix("== ")] = []
        else:
            said[list(said)[-1]].append(line)
    assert list(said) == list(KINDS)
    return said, done.stdout + done.stderr


@pytest.mark.parametrize(("kind", "tool"), KINDS.items())
def test_the_terminal_masks_a_sensitive_field_like_every_channel(
    kind: str, tool: str, desks: tuple[dict[str, list[str]], str]
) -> None:
    said, everything = desks
    lines = said[kind]
    shown = f'{{"order_id": "A-1001", "card_number": "{MASK}", "amount": 120.0}}'
    question = lines[: lines.index(next(line for line in lines if line.startswith("pending:")))]
    assert question[0].startswith("? ")  # the terminal channel's question, then its values
    assert [line for line in question if line.startswith("  Card number")] == [
        f"  Card number: {MASK}"
    ]
    assert lines[len(question)] == f"pending: {tool} {shown}"  # what /pending and events show
    ended = [line for line in lines if line.startswith(("= ", "  What ran"))]
    assert ended[0].startswith("= Approved by you.")  # the terminal's outcome line
    assert ended[1] == f"  What ran: Order ID: A-1001 · Card number: {MASK} · Amount: 120.00"
    audit = [line for line in lines if line.startswith("audit: ")]
    assert audit == [f"audit: {tool}: REPLIED by you: approved ran with {shown}"]
    assert lines[-1] == "ended COMPLETED"
    assert CARD_NUMBER not in everything
