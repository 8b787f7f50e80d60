"""``python -m bot demo``: the office desk in the terminal, answered from stdin or a file."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from bot import App, ExecutionResult, Settings
from bot.cli.main import main
from bot.cli.terminal import OWNER_ID, TENANT_ID
from bot.desk.demo import OfficeDeskApplication
from bot.desk.offline_model import next_message

MEMORY = "sqlite+aiosqlite:///:memory:"
FINAL_ANSWER = (
    "answer: Here is what happened: refunded 120.00 to the card of order A-1001; "
    "the expense was rejected: too expensive."
)


def run_demo(monkeypatch: pytest.MonkeyPatch, stdin: str, *args: str) -> int:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    return main(["demo", "--database-url", MEMORY, *args])


def audit_trail(out: str) -> list[str]:
    return [line.strip() for line in out.split("audit trail:\n", 1)[1].splitlines() if line]


def test_piped_answers_finish_the_execution(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_demo(monkeypatch, "approve\nreject: too expensive\n")

    out = capsys.readouterr().out
    assert code == 0
    assert "model: offline demo model (scripted, no network)" in out
    assert "database: in memory" in out
    assert '[1/2] refund-card-tool {"order_id": "A-1001", "amount": 120.0}' in out
    assert '[2/2] book-expense-tool {"purpose": "team lunch", "amount": 86.5}' in out
    assert FINAL_ANSWER in out
    assert audit_trail(out) == [
        f"1. refund-card-tool: REPLIED by {OWNER_ID}: approved",
        f"2. book-expense-tool: REPLIED by {OWNER_ID}: rejected: too expensive",
    ]


def test_both_questions_are_asked_before_the_first_prompt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_demo(monkeypatch, "approve\napprove\n")

    out = capsys.readouterr().out
    first_prompt = out.index("approve / reject[: reason] / free text >")
    assert out.index("? Refund 120.00 to the card of order A-1001?") < first_prompt
    assert out.index("? Book 86.50 for team lunch?") < first_prompt


def test_no_pause_id_is_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answered: list[str] = []
    resume = App.resume

    async def spy(self: App, pause_id: str, **kwargs: Any) -> ExecutionResult:
        answered.append(pause_id)
        return await resume(self, pause_id, **kwargs)

    monkeypatch.setattr(App, "resume", spy)
    run_demo(monkeypatch, "what?\napprove\napprove\n")

    out = capsys.readouterr().out
    assert len(set(answered)) == 2
    assert not [pause_id for pause_id in answered if pause_id in out]


def test_a_rejected_refund_is_told_with_its_reason(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_demo(monkeypatch, "no way: wrong customer\nlgtm\n")

    out = capsys.readouterr().out
    assert code == 0
    assert (
        "answer: Here is what happened: the refund was rejected: wrong customer; "
        "booked 86.50 for team lunch." in out
    )


def test_an_unreadable_reply_is_asked_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_demo(monkeypatch, "maybe later?\n\napprove\nreject: too expensive\n")

    out = capsys.readouterr().out
    assert code == 0
    assert "Not understood: The reply reads as a question. The question still waits" in out
    assert "use the buttons" not in out  # the terminal has none
    assert out.count("[1/2] refund-card-tool") == 1
    assert FINAL_ANSWER in out
    assert len(audit_trail(out)) == 2


def test_running_out_of_answers_leaves_the_execution_paused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_demo(monkeypatch, "approve\n")

    out = capsys.readouterr().out
    assert code == 0
    assert "No more answers: the execution stays paused (1 question waits)." in out
    assert "The database is in memory" in out
    assert "answer:" not in out
    assert "audit trail" not in out


def test_a_paused_demo_is_kept_in_its_database(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/kept.db"
    monkeypatch.setattr(sys, "stdin", io.StringIO("approve\n"))

    assert main(["demo", "--database-url", url]) == 0
    assert f"It is kept in {tmp_path / 'kept.db'}." in capsys.readouterr().out
    assert asyncio.run(pending_tools(url)) == ["book-expense-tool"]


async def pending_tools(url: str) -> list[str]:
    async with await App.create(
        OfficeDeskApplication, database_url=url, settings=Settings()
    ) as app:
        pending = await app.list_pending(tenant_id=TENANT_ID, owner_id=OWNER_ID)
    return [p.ask.tool for p in pending]


def test_the_default_database_is_a_file_in_the_current_directory(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("approve\napprove\n"))

    assert main(["demo"]) == 0
    assert f"database: {tmp_path / 'countersign-demo.db'}" in capsys.readouterr().out
    assert (tmp_path / "countersign-demo.db").is_file()


def test_answers_can_come_from_a_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    answers = tmp_path / "answers.txt"
    answers.write_text("approve\nreject: too expensive\n", encoding="utf-8")

    code = run_demo(monkeypatch, "", "--answers", str(answers))

    out = capsys.readouterr().out
    assert code == 0
    assert "free text > approve\n" in out  # the answer is shown after its prompt
    assert FINAL_ANSWER in out


def test_a_database_that_cannot_be_opened_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/missing/dir/d.db"
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))

    assert main(["demo", "--database-url", url]) == 2
    assert capsys.readouterr().err == (
        f"--database-url: the folder {tmp_path}/missing/dir does not exist\n"
    )


def test_the_demo_runs_as_a_process_with_piped_answers(tmp_path: Path) -> None:
    """``python -m bot demo`` as a person runs it, in a folder of their own: its database is a
    file there."""
    done = subprocess.run(
        [sys.executable, "-m", "bot", "demo"],
        input="approve\nreject: too expensive\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_offline_env(),
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert "model: offline demo model (scripted, no network)" in done.stdout
    assert FINAL_ANSWER in done.stdout
    assert "2. book-expense-tool: REPLIED by terminal-user: rejected: too expensive" in done.stdout
    # the only line on stderr: the key made for the new database, to back up with it
    [warning] = done.stderr.splitlines()
    database = tmp_path / "countersign-demo.db"
    assert warning.startswith(f"generated a new encryption key in {database}.key (mode 0600)")
    assert database.is_file()


# ------------------------------------------------------------------------------- the model


def test_the_offline_model_calls_both_tools_at_once_first() -> None:
    message = next_message([HumanMessage(content="refund and book")])

    assert [(c["name"], c["args"]) for c in message.tool_calls] == [
        ("refund-card-tool", {"order_id": "A-1001", "amount": 120.0}),
        ("book-expense-tool", {"purpose": "team lunch", "amount": 86.5}),
    ]


@pytest.mark.parametrize(
    ("refund", "expense", "summary"),
    [
        (
            '{"status":"refunded 120.00 to the card of order A-1001"}',
            "Tool error: the call was rejected by U1",
            "refunded 120.00 to the card of order A-1001; the expense was rejected",
        ),
        (
            "Tool error: the call was withdrawn before it was answered",
            '{"status":"booked 86.50 for team lunch"}',
            "the refund did not happen (the call was withdrawn before it was answered); "
            "booked 86.50 for team lunch",
        ),
    ],
)
def test_the_offline_model_sums_up_what_the_tools_said(
    refund: str, expense: str, summary: str
) -> None:
    messages = [
        HumanMessage(content="refund and book"),
        next_message([]),
        ToolMessage(content=refund, tool_call_id="demo-call-1", name="refund-card-tool"),
        ToolMessage(content=expense, tool_call_id="demo-call-2", name="book-expense-tool"),
    ]

    answer = next_message(messages)

    assert isinstance(answer, AIMessage)
    assert not answer.tool_calls
    assert answer.content == f"Here is what happened: {summary}."


def _offline_env() -> dict[str, str]:
    """The process's environment without Slack or model settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "COUNTERSIGN_"))}


def test_a_path_that_is_no_database_file_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "folder.db").mkdir()
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))

    assert main(["demo", "--database-url", f"sqlite+aiosqlite:///{tmp_path}/folder.db"]) == 2
    assert capsys.readouterr().err == (
        "--database-url: the database could not be opened: unable to open database file\n"
    )


def test_a_refund_is_rejected_only_with_a_reason_at_the_prompt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's refund role takes a rejection only with its reason
    (``reject_reason="required"``): a bare "reject" is not understood and says how. (Called in
    this process: the demo as a process is ``test_the_demo_runs_as_a_process_with_piped_answers``.)
    """
    code = run_demo(monkeypatch, "reject\nno way: wrong customer\nlgtm\n")
    ran = capsys.readouterr()

    assert code == 0, ran.err
    assert (
        "Not understood: This request takes a rejection only with a reason: write it after a "
        'colon, like "reject: wrong customer". The question still waits; try again.'
    ) in ran.out
    assert ran.out.count("[1/2] refund-card-tool") == 1
    assert audit_trail(ran.out) == [
        f"1. refund-card-tool: REPLIED by {OWNER_ID}: rejected: wrong customer",
        f"2. book-expense-tool: REPLIED by {OWNER_ID}: approved",
    ]


def test_help_shows_the_words_understood_and_questions_come_as_asked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_demo(monkeypatch, "?\napprove\nHELP\nreject: too expensive\n")
    ran = capsys.readouterr()

    assert code == 0, ran.err
    assert ran.out.count('Reply "approve" or "reject: <reason>".') == 2
    assert ran.out.count("  approve: approve, approved, ") == 2
    assert "lgtm" in ran.out and "no way" in ran.out
    assert "Not understood" not in ran.out  # help is never read as an answer
    assert FINAL_ANSWER in ran.out
    # in the order the model asked, whatever order the store lists them in
    assert ran.out.index("[1/2] refund-card-tool") < ran.out.index("[2/2] book-expense-tool")
    assert audit_trail(ran.out) == [
        f"1. refund-card-tool: REPLIED by {OWNER_ID}: approved",
        f"2. book-expense-tool: REPLIED by {OWNER_ID}: rejected: too expensive",
    ]
