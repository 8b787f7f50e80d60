"""``python -m bot keygen`` and ``python -m bot reencrypt`` (through ``bot.cli.keys.register``)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

import bot.security.key_check
from bot.cli.keys import keygen_command, reencrypt_command, register
from bot.security import generate_key, parse_key_ring
from tests.office import Inbox, Ledger
from tests.security.office_run import (
    KEY_A,
    KEY_B,
    key_ids,
    open_office,
    script_office,
    start_office,
    stored_values,
)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bot")
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def run(*argv: str) -> int:
    args = parse(*argv)
    code: int = args.handler(args)
    return code


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory (no .env) and no Countersign settings in the environment."""
    monkeypatch.chdir(tmp_path)
    for name in ("COUNTERSIGN_ENCRYPTION_KEYS", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


# ------------------------------------------------------------------------------ keygen


def test_keygen_prints_one_entry_and_how_to_rotate(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("keygen") == 0

    out, err = capsys.readouterr()
    [line] = out.splitlines()
    assert parse_key_ring(line).current.key_id.startswith("k")
    assert "COUNTERSIGN_ENCRYPTION_KEYS" in err
    assert "python -m bot reencrypt" in err
    assert len(err.splitlines()) == 2


def test_keygen_takes_an_id_and_makes_a_new_key_each_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run("keygen", "--id", "2026-q1") == 0
    assert keygen_command(argparse.Namespace()) == 0

    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("2026-q1:")
    assert parse_key_ring(first).current.secret != parse_key_ring(second).current.secret


def test_keygen_refuses_a_malformed_id(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse("keygen", "--id", "a.b")

    assert exit_.value.code == 2
    assert "a key id is 1 to 32 letters" in capsys.readouterr().err


# ------------------------------------------------------------------------------ reencrypt


def _office_under(url: str, keys: str) -> None:
    """Leave a paused office run in ``url``, written under ``keys``."""
    script_office()

    async def start() -> None:
        async with await open_office(url, keys, Inbox(), Ledger()) as app:
            await start_office(app)

    asyncio.run(start())


def test_reencrypt_moves_every_value_and_says_how_many(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{workdir / 'office.db'}"
    _office_under(url, KEY_A)
    monkeypatch.setenv("COUNTERSIGN_ENCRYPTION_KEYS", f"{KEY_B},{KEY_A}")

    assert run("reencrypt", "--database-url", url, "--batch-size", "3") == 0
    assert reencrypt_command(parse("reencrypt", "--database-url", url)) == 0

    moved, again = capsys.readouterr().out.splitlines()
    assert moved.startswith("re-encrypted ")
    assert "under key key-b (cs_pauses 2, cs_executions 1, checkpoints " in moved
    assert again == "nothing to re-encrypt: every stored value is under key key-b already"
    assert set(key_ids(asyncio.run(stored_values(url)))) == {"key-b"}


def test_reencrypt_reads_the_database_url_and_the_key_file(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{workdir / 'countersign.db'}"
    _office_under(url, "")  # no key set: the key file beside the database
    monkeypatch.setenv("DATABASE_URL", url)

    assert run("reencrypt") == 0

    assert capsys.readouterr().out.startswith("nothing to re-encrypt")


def test_reencrypt_names_a_missing_old_key_and_no_key(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{workdir / 'office.db'}"
    _office_under(url, KEY_A)
    monkeypatch.setenv("COUNTERSIGN_ENCRYPTION_KEYS", KEY_B)  # A was dropped too early

    assert run("reencrypt", "--database-url", url) == 2  # the setting's problem

    [err] = capsys.readouterr().err.splitlines()
    assert err.startswith("COUNTERSIGN_ENCRYPTION_KEYS cannot open the stored data: values in ")
    assert "encrypted under key id 'key-a', which it does not hold: put that key back" in err
    assert KEY_A.split(":")[1] not in err and KEY_B.split(":")[1] not in err
    assert set(key_ids(asyncio.run(stored_values(url)))) == {"key-a"}  # nothing moved


def test_reencrypt_stopped_by_a_missing_key_midway_names_the_setting(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value under a dropped key that the check at start did not read (it reads a few)."""
    url = f"sqlite+aiosqlite:///{workdir / 'office.db'}"
    _office_under(url, KEY_A)
    monkeypatch.setenv("COUNTERSIGN_ENCRYPTION_KEYS", KEY_B)
    monkeypatch.setattr(bot.security.key_check, "ring_problem", lambda *_, **__: None)

    assert run("reencrypt", "--database-url", url) == 2

    [err] = capsys.readouterr().err.splitlines()
    assert err.startswith(
        "COUNTERSIGN_ENCRYPTION_KEYS lacks a key: re-encryption stopped at cs_pauses row (id=1): "
    )
    assert "encrypted under key id 'key-a'" in err


@pytest.mark.parametrize(
    ("url", "says"),
    [
        (
            "sqlite+aiosqlite:///:memory:",
            "--database-url: an in-memory database keeps nothing to re-encrypt",
        ),
        ("sqlite+aiosqlite:///nowhere/none.db", "--database-url: there is no database at "),
        (
            "postgresql+asyncpg://nobody@127.0.0.1:9/nothing",
            "COUNTERSIGN_ENCRYPTION_KEYS is not set, and PostgreSQL needs it",
        ),
    ],
)
def test_reencrypt_refuses_what_it_cannot_do(
    workdir: Path, capsys: pytest.CaptureFixture[str], url: str, says: str
) -> None:
    assert run("reencrypt", "--database-url", url) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(says)
    assert list(workdir.iterdir()) == []  # nothing was created


def test_reencrypt_refuses_a_malformed_setting(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COUNTERSIGN_ENCRYPTION_KEYS", "k1:short")
    (workdir / "office.db").write_bytes(b"")

    assert run("reencrypt", "--database-url", f"sqlite+aiosqlite:///{workdir}/office.db") == 2

    assert capsys.readouterr().err.startswith("COUNTERSIGN_ENCRYPTION_KEYS entry 1 (key id 'k1')")


@pytest.mark.parametrize("size", ["0", "-1", "many"])
def test_reencrypt_refuses_a_bad_batch_size(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("reencrypt", "--batch-size", size)

    assert "at least 1" in capsys.readouterr().err


def test_a_generated_key_works_for_an_app(workdir: Path) -> None:
    url = f"sqlite+aiosqlite:///{workdir / 'office.db'}"
    _office_under(url, generate_key("fresh").entry())

    assert set(key_ids(asyncio.run(stored_values(url)))) == {"fresh"}
