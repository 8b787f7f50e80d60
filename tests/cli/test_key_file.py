"""The key file beside a SQLite database: kept out of git, and never silently replaced."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.security import key_file_for
from tests.cli.processes import REPO, person_env, python_m_bot, python_m_bot_in_process

DEMO_DATABASE = "countersign-demo.db"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("database", ["countersign.db", DEMO_DATABASE, "office.db"])
def test_git_ignores_the_key_file_of_a_database(database: str) -> None:
    key_file = key_file_for(Path(database)).name
    temporary = f".{key_file}.0123456789abcdef.tmp"  # while the key file is being made

    done = subprocess.run(
        ["git", "check-ignore", "--no-index", key_file, temporary],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [key_file, temporary]


def test_a_lost_key_file_is_refused_when_the_database_holds_rows(tmp_path: Path) -> None:
    answers = tmp_path / "answers.txt"
    answers.write_text("approve\n", encoding="utf-8")  # one question stays paused
    # the database to refuse, made by the demo called in this process (a process costs seconds)
    first = python_m_bot_in_process(
        "demo", "--answers", str(answers), cwd=tmp_path, env=person_env()
    )
    assert first.code == 0, first.err
    database, key_file = tmp_path / DEMO_DATABASE, tmp_path / f"{DEMO_DATABASE}.key"
    key_file.unlink()
    before = hashlib.sha256(database.read_bytes()).hexdigest()

    again = python_m_bot("demo", cwd=tmp_path, stdin="approve\n")
    reencrypt = python_m_bot(
        "reencrypt", "--database-url", f"sqlite+aiosqlite:///{database}", cwd=tmp_path
    )

    for ran in (again, reencrypt):
        assert ran.code == 2, ran.err
        [line] = ran.err_lines
        assert line == (
            f"the key file {key_file} is missing but the database holds encrypted rows: restore "
            "the file (from the backup of the database) or set COUNTERSIGN_ENCRYPTION_KEYS to "
            "the key it held"
        )
    assert not key_file.exists()  # no new key was made
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before
