"""Every command a person is told to run (README, .env.example, our messages), as a process."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.security import parse_key_ring
from tests.cli.processes import REPO, person_env, python_m_bot, python_m_bot_in_process
from tests.security.office_run import key_ids, stored_values

HEAVY = ("langchain_core", "langchain_openai", "langgraph", "openai", "slack_bolt", "sqlalchemy")
COMMAND = re.compile(r"python -m bot(?: (?P<command>[a-z][a-z-]*))?")


def told_commands() -> set[str]:
    """The sub-commands named after ``python -m bot`` in the docs and in our own sources."""
    texts = [REPO / "README.md", REPO / ".env.example", *sorted((REPO / "bot").rglob("*.py"))]
    found = {m.group("command") or "" for t in texts for m in COMMAND.finditer(t.read_text())}
    return found


def test_the_docs_name_the_commands_this_test_knows() -> None:
    assert told_commands() == {
        "", "serve", "demo", "keygen", "reencrypt", "grants", "delegations",
    }  # fmt: skip


@pytest.mark.parametrize("command", sorted(told_commands()))
def test_every_command_told_of_has_help(command: str, tmp_path: Path) -> None:
    ran = python_m_bot(*([command] if command else []), "--help", cwd=tmp_path)

    assert ran.code == 0, ran.err
    assert ran.out.startswith(f"usage: python -m bot {command}".rstrip())
    assert ran.err == ""


def test_help_loads_neither_langchain_nor_slack_nor_sqlalchemy(tmp_path: Path) -> None:
    ran = python_m_bot_with_importtime("--help", cwd=tmp_path)

    imported = {line.split("|")[-1].strip() for line in ran.splitlines() if "|" in line}
    assert "bot.cli.main" in imported  # the measure works
    assert not [m for m in imported if m.split(".")[0] in HEAVY]


def python_m_bot_with_importtime(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=person_env(),
        timeout=60,
        check=True,
    )
    return done.stderr


# ------------------------------------------------------------------------------ the commands


def test_keygen_prints_a_key_the_setting_takes(tmp_path: Path) -> None:
    ran = python_m_bot("keygen", cwd=tmp_path)

    assert ran.code == 0, ran.err
    [entry] = ran.out.splitlines()
    ring = parse_key_ring(entry)  # the format of COUNTERSIGN_ENCRYPTION_KEYS
    assert len(ring.current.secret) == 32
    assert "COUNTERSIGN_ENCRYPTION_KEYS" in ran.err  # how to use it (the rotation test does)


def test_reencrypt_moves_the_rows_after_a_rotation(tmp_path: Path) -> None:
    old, new = (python_m_bot("keygen", cwd=tmp_path).out.strip() for _ in range(2))
    # the demo runs on the old key alone: a key keygen printed is one the setting takes
    url = f"sqlite+aiosqlite:///{tmp_path / 'office.db'}"
    answers = tmp_path / "answers.txt"
    answers.write_text("approve\n", encoding="utf-8")  # one question stays: rows remain under it
    paused = python_m_bot_in_process(  # the demo, called in this process (a process costs seconds)
        "demo",
        "--database-url",
        url,
        "--answers",
        str(answers),
        cwd=tmp_path,
        env=person_env(COUNTERSIGN_ENCRYPTION_KEYS=old),
    )
    assert paused.code == 0, paused.err
    rotated = person_env(COUNTERSIGN_ENCRYPTION_KEYS=f"{new},{old}", DATABASE_URL=url)

    moved = python_m_bot("reencrypt", cwd=tmp_path, env=rotated)
    again = python_m_bot("reencrypt", cwd=tmp_path, env=rotated)

    new_id = parse_key_ring(new).current.key_id
    assert moved.code == 0, moved.err
    assert re.fullmatch(rf"re-encrypted \d+ values under key {new_id} \(.*\)\n", moved.out)
    assert again.out == f"nothing to re-encrypt: every stored value is under key {new_id} already\n"
    assert set(key_ids(asyncio.run(stored_values(url)))) == {new_id}
