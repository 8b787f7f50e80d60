"""``python -m bot``: the sub-commands, ``--help``, the web desk without Slack, ``serve``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import bot.__main__
from bot.cli.main import main
from tests.cli.processes import person_env
from tests.cli.web_desk import Browser, start_python_m_bot
from tests.ports import free_port

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


def test_a_malformed_database_url_is_not_repeated(capsys: pytest.CaptureFixture[str]) -> None:
    """It may hold a password: the error names the argument, never its text."""
    with pytest.raises(SystemExit):
        main(["demo", "--database-url", "postgresql+asyncpg://u:s3cr3t@db:notaport/x"])

    assert "s3cr3t" not in capsys.readouterr().err


def test_no_command_without_slack_settings_serves_the_desk_on_the_web(tmp_path: Path) -> None:
    """The first run of a fresh clone: the missing settings named, the desk served on
    127.0.0.1, its inbox link printed; a person asks the desk for something and answers there."""
    port = free_port()
    served = start_python_m_bot(tmp_path, person_env(PORT=str(port)))
    try:
        assert served.printed == [
            "Serving the office desk on the web instead (the terminal demo: python -m bot demo).",
            f"Countersign serves the office desk on http://127.0.0.1:{port}/",
            served.printed[-1],
        ]
        assert served.inbox_link.startswith(f"http://127.0.0.1:{port}/i/")
        browser = Browser(origin=served.origin)
        status, url, page = browser.get(served.inbox_link)
        assert (status, url) == (200, f"{served.origin}/inbox")
        assert "Nothing waits for you." in page

        status, _, page = browser.submit("/", {"text": "refund A-1001, book the lunch"})
        assert status == 200
        links = re.findall(r'href="(http://[^"]+/q/[^"]+)"', page)
        assert len(links) == 2  # the refund and the expense
        refund = next(link for link in links if "card" in browser.get(link)[2])
        expense = next(link for link in links if link != refund)

        status, _, page = browser.submit(refund, {"action": "approve"})
        assert status == 200 and "Approved by you." in page
        status, _, page = browser.submit(expense, {"action": "reply", "reply": "reject: too much"})
        assert status == 200 and "Rejected by you: too much" in page
        _, _, page = browser.get("/inbox")
        assert "Nothing waits for you." in page
    finally:
        code, out, err = served.stop()
    assert code == 0, err
    assert out.strip() == "Stopping."
    missing_token, missing_secret, key_made, *logged = err.splitlines()
    assert missing_token.startswith(MISSING_TOKEN)
    assert missing_secret.startswith(MISSING_SECRET)
    assert " WARNING countersign.security: generated a new encryption key in " in key_made
    # at the default level (INFO), the desk's default notifier is a line with each link, and
    # each answer is a line
    notices = [line for line in logged if " INFO countersign.web: web: Approval needed: " in line]
    assert len(notices) == 2
    assert all(f"http://127.0.0.1:{port}/q/" in line for line in notices)
    answers = [line for line in logged if " INFO countersign.answers: answer recorded: " in line]
    assert [a.split("answer recorded: ")[1].split(",")[0] for a in answers] == [
        "approved refund-card-tool",
        "rejected book-expense-tool",
    ]
    assert len(logged) == 4
    assert (tmp_path / "countersign.db").is_file()


def test_the_web_desk_binds_the_address_it_is_given_and_names_only_what_is_missing(
    tmp_path: Path,
) -> None:
    """``COUNTERSIGN_BIND_ADDRESS``: the desk listens there (and links there), nowhere else.
    With a bot token and a blank signing secret (blank is missing), only the secret is named
    missing. (One process for both: a start costs seconds.)"""
    port = free_port()
    served = start_python_m_bot(
        tmp_path,
        person_env(
            PORT=str(port),
            COUNTERSIGN_BIND_ADDRESS="127.0.0.2",
            SLACK_BOT_TOKEN="xoxb-test",
            SLACK_SIGNING_SECRET="   ",
        ),
    )
    try:
        assert f"Countersign serves the office desk on http://127.0.0.2:{port}/" in served.printed
        assert served.inbox_link.startswith(f"http://127.0.0.2:{port}/i/")
        status, _, page = Browser(origin=served.origin).get(served.inbox_link)
        assert status == 200 and "Nothing waits for you." in page
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10)
    finally:
        code, _, err = served.stop()
    assert code == 0, err
    assert err.splitlines()[0] == (
        "SLACK_SIGNING_SECRET is missing: copy the Signing Secret from the Slack app's "
        "Basic Information page into .env"
    )
    assert not any("SLACK_BOT_TOKEN" in line for line in err.splitlines())


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


def test_a_malformed_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = python_m_bot(cwd=tmp_path, env={**without_slack(), "PORT": "eighty"})

    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "PORT is malformed: a port number (1 to 65535), not 'eighty'"
    )


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
