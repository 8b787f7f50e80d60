"""Batches at the demo's prompt: ``list`` numbers the questions waiting; ``approve all``,
``approve 1,2``, ``reject all: reason`` answer them in one batch (``App.answer_all``, each as
listed), each one settled on its own in the audit trail, with the kit's line for each."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bot import AnswerOutcome, App, WorkflowStartText
from bot.cli.terminal import OWNER_ID, TENANT_ID
from bot.cli.terminal_batches import REASON_NEEDED, answer_batch, batch_command
from bot.desk.demo import REQUEST, OfficeDeskApplication, OfficeDeskWorkflow
from channels.kit.texts import BATCH_APPROVED, BATCH_REJECTED
from tests.cli.processes import python_m_bot
from tests.cli.test_demo import MEMORY, audit_trail, run_demo


def test_approve_all_lists_and_approves_every_waiting_question(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_demo(monkeypatch, "approve all\n")

    out = capsys.readouterr().out
    assert code == 0, out
    assert "Approving the 2 questions waiting:" in out
    assert '  - refund-card-tool {"order_id": "A-1001", "amount": 120.0}' in out
    assert '  - book-expense-tool {"purpose": "team lunch", "amount": 86.5}' in out
    assert audit_trail(out) == [
        f"1. refund-card-tool: REPLIED by {OWNER_ID}: approved",
        f"2. book-expense-tool: REPLIED by {OWNER_ID}: approved",
    ]


def test_list_then_a_picked_batch_then_a_rejected_one_with_its_reason(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """At the prompt: ``list`` numbers what waits; ``approve 2`` approves that one only, the
    kit's line saying so; ``reject 1: wrong card`` rejects the other with its reason."""
    code = run_demo(monkeypatch, "list\napprove 2\nreject 1: wrong card\n")

    out = capsys.readouterr().out
    assert code == 0, out
    assert '  [1] refund-card-tool {"order_id": "A-1001", "amount": 120.0}' in out
    assert '  [2] book-expense-tool {"purpose": "team lunch", "amount": 86.5}' in out
    assert (
        f'  = book-expense-tool {{"purpose": "team lunch", "amount": 86.5}}: {BATCH_APPROVED}'
        in out
    )
    assert (
        f'  = refund-card-tool {{"order_id": "A-1001", "amount": 120.0}}: {BATCH_REJECTED}' in out
    )
    assert audit_trail(out) == [
        f"1. refund-card-tool: REPLIED by {OWNER_ID}: rejected: wrong card",
        f"2. book-expense-tool: REPLIED by {OWNER_ID}: approved",
    ]


def test_a_batch_the_prompt_cannot_take_answers_nothing_and_says_why(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rejection without its reason, or a number not listed: nothing is answered, the person
    is told how, and the questions still wait."""
    code = run_demo(monkeypatch, "reject all\napprove 3\n")

    out = capsys.readouterr().out
    assert code == 0, out
    assert REASON_NEEDED in out
    assert "No question 3 waits: type list to see them numbered (1 to 2)." in out
    assert "No more answers: the execution stays paused (2 questions wait)." in out


def test_a_person_at_the_prompt_of_python_m_bot_demo_lists_and_approves_a_batch(
    tmp_path: Path,
) -> None:
    """The same as a process: ``python -m bot demo``, answered on its standard input."""
    ran = python_m_bot(
        "demo", "--database-url", "sqlite+aiosqlite:///:memory:",
        cwd=tmp_path, stdin="list\napprove 1,2\n",
    )  # fmt: skip
    assert ran.code == 0, ran.err
    assert "  [2] book-expense-tool" in ran.out
    assert "Approving the 2 questions waiting:" not in ran.out  # named, not "all"
    assert "Approving 2 questions:" in ran.out
    assert ran.out.count(f": {BATCH_APPROVED}") == 2
    assert audit_trail(ran.out) == [
        f"1. refund-card-tool: REPLIED by {OWNER_ID}: approved",
        f"2. book-expense-tool: REPLIED by {OWNER_ID}: approved",
    ]


async def test_a_batch_approves_each_question_as_the_list_showed_it() -> None:
    """The terminal's batch carries the round each question was listed with
    (``App.answer_all(shown_rounds=)``): one edited since the list is refused by the answer
    path, never approved as it now stands."""
    async with await App.create(OfficeDeskApplication, database_url=MEMORY) as app:
        result = await app.execute(
            OfficeDeskWorkflow,
            WorkflowStartText(text=REQUEST),
            tenant_id=TENANT_ID,
            owner_id=OWNER_ID,
        )
        given: dict[str, Any] = {}
        answer_all = app.answer_all

        async def recorded(pause_ids: Sequence[str], **kwargs: Any) -> list[AnswerOutcome]:
            given.update(kwargs)
            return await answer_all(pause_ids, **kwargs)

        app.answer_all = recorded  # type: ignore[method-assign]
        command = batch_command("approve 1,2")
        assert command is not None
        _, lines = await answer_batch(
            app, command, result.pending, tenant_id=TENANT_ID, by=OWNER_ID
        )
        assert given["shown_rounds"] == {p.pause_id: p.shown_round for p in result.pending}
        assert [line.rsplit(": ", 1)[1] for line in lines] == [BATCH_APPROVED, BATCH_APPROVED]
