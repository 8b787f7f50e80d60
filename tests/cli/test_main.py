"""``python -m bot``: the sub-commands, ``--help``, and ``serve`` until the Slack bot lands."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import bot.__main__
from bot.cli.main import main

ANSWERS = "approve\nreject: too expensive\n"
MISSING_TOKEN = (
    "SLACK_BOT_TOKEN is missing: create the Slack app from manifest.yml and copy its "
    "Bot User OAuth Token"
)
MISSING_SECRET = "SLACK_SIGNING_SECRET is missing: copy the Signing Secret"
MISSING_DESK_CHANNEL = "COUNTERSIGN_APPROVAL_CHANNEL is missing"


def python_m_bot(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env if env is not None else without_slack(),
        timeout=60,
        check=False,
    )


def without_slack() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "COUNTERSIGN_"))}


@pytest.fixture
def no_slack_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty working directory (no .env) and no Slack settings in the environment."""
    for name in list(os.environ):
        if name.startswith("SLACK_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_help_lists_the_sub_commands(tmp_path: Path) -> None:
    done = python_m_bot("--help", cwd=tmp_path)

    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m bot")
    assert "serve" in done.stdout
    assert "demo" in done.stdout
    assert "run the office desk example in the terminal" in done.stdout


def test_demo_help_names_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--help"])

    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--database-url URL" in out
    assert "--answers FILE" in out


def test_an_unknown_sub_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["deploy"])

    assert exit_.value.code == 2
    assert "invalid choice: 'deploy'" in capsys.readouterr().err


def test_an_unreadable_answers_file_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--answers", str(tmp_path / "none.txt")])

    assert exit_.value.code == 2
    assert "argument --answers: cannot read" in capsys.readouterr().err


def test_a_malformed_database_url_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--database-url", "not a url"])

    assert exit_.value.code == 2
    assert "argument --database-url: not a database URL" in capsys.readouterr().err


def test_no_command_without_slack_settings_names_them_and_runs_the_demo(tmp_path: Path) -> None:
    done = python_m_bot(cwd=tmp_path, stdin=ANSWERS)

    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(MISSING_TOKEN)
    assert lines[1].startswith(MISSING_SECRET)
    assert lines[2].startswith("generated a new encryption key in")  # the demo's new database
    assert "model: offline demo model (scripted, no network)" in done.stdout
    assert "the expense was rejected: too expensive" in done.stdout
    assert (tmp_path / "countersign-demo.db").is_file()


def test_serve_without_slack_settings_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = python_m_bot("serve", cwd=tmp_path, stdin=ANSWERS)

    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are missing: create the Slack app from "
        "manifest.yml and copy its Bot User OAuth Token (OAuth & Permissions, xoxb-...) into "
        ".env; copy the Signing Secret from the Slack app's Basic Information page into .env "
        "(or try the terminal demo: python -m bot demo)"
    ]
    assert done.stdout == ""  # no demo
    assert list(tmp_path.iterdir()) == []  # no database either


def test_no_command_names_only_what_is_missing(
    no_slack_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "   ")  # blank is missing
    monkeypatch.setattr(sys, "stdin", io.StringIO(ANSWERS))

    assert main([]) == 0

    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "SLACK_SIGNING_SECRET is missing: copy the Signing Secret from the Slack app's "
        "Basic Information page into .env"
    ]
    assert "answer: Here is what happened" in captured.out


def test_serve_with_slack_settings_serves_the_desk_which_names_its_channel(
    no_slack_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "secret")

    assert main(["serve"]) == 2

    captured = capsys.readouterr()
    assert captured.err.startswith(MISSING_DESK_CHANNEL)
    assert len(captured.err.splitlines()) == 1
    assert "model:" not in captured.out  # no demo


def test_serve_reads_the_slack_settings_from_dot_env(
    no_slack_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (no_slack_env / ".env").write_text(
        "SLACK_BOT_TOKEN=xoxb-test\nSLACK_SIGNING_SECRET=secret\n", encoding="utf-8"
    )

    assert main([]) == 2
    assert capsys.readouterr().err.startswith(MISSING_DESK_CHANNEL)


def test_the_module_and_the_script_share_the_entry_point() -> None:
    assert bot.__main__.main is main
