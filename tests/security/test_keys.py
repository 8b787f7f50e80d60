"""Keys: parsing the setting, the key file beside a SQLite database, and where keys come from."""

from __future__ import annotations

import asyncio
import base64
import logging
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bot import App, Settings
from bot.core.errors import SettingsError
from bot.security import (
    EncryptionKey,
    KeyRing,
    UnknownKeyError,
    generate_key,
    key_file_for,
    key_source,
    load_or_create_key_file,
    parse_key_ring,
)
from bot.testing import mock_llm
from tests.office import OfficeAgent, OfficeApplication

ROOT = Path(__file__).resolve().parents[2]
SECRET = base64.b64encode(bytes(range(32))).decode()
OTHER = base64.b64encode(bytes(range(1, 33))).decode()
NO_SERVER = "postgresql+asyncpg://nobody@127.0.0.1:9/nothing"  # never connected to


@pytest.fixture(autouse=True)
def _served_model() -> None:
    mock_llm(OfficeAgent)  # the office's model, so an App can be assembled


# ------------------------------------------------------------------------------ the setting


def test_the_first_key_is_current_and_the_others_read() -> None:
    ring = parse_key_ring(f" new:{OTHER} ,\nold:{SECRET}, ")

    assert ring.current.key_id == "new"
    assert ring.key_ids == ("new", "old")
    assert ring.key("old").secret == bytes(range(32))


def test_a_key_file_may_hold_comments_and_one_key_a_line() -> None:
    ring = parse_key_ring(f"# a comment, with a comma\nk1:{SECRET}\n\nk0:{OTHER}\n")

    assert ring.key_ids == ("k1", "k0")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "holds no key"),
        (" , ", "holds no key"),
        (SECRET, "entry 1 is not <key-id>:<base64 key>"),
        (f"k1:{SECRET},k2:", "entry 2 is not <key-id>:<base64 key>"),
        (f":{SECRET}", "entry 1 is not <key-id>:<base64 key>"),
        (f"k 1:{SECRET}", "entry 1 has a malformed key id"),
        (f"{'k' * 33}:{SECRET}", "entry 1 has a malformed key id"),
        ("k1:not*base64", "entry 1 (key id 'k1') is not valid base64"),
        (f"k1:{base64.b64encode(bytes(16)).decode()}", "(key id 'k1') is 16 bytes, not 32"),
        (f"k1:{SECRET},k1:{OTHER}", "gives the key id 'k1' twice"),
    ],
)
def test_a_malformed_setting_is_one_line_naming_it(text: str, says: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_key_ring(text)

    message = str(caught.value)
    assert message.startswith("[settings.invalid] COUNTERSIGN_ENCRYPTION_KEYS ")
    assert says in message
    assert "\n" not in message
    assert SECRET not in message and OTHER not in message


def test_a_reversed_entry_does_not_echo_the_key() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_key_ring(f"{SECRET}:k1")

    assert SECRET not in str(caught.value)


def test_a_new_key_is_a_valid_entry() -> None:
    key = generate_key()

    [parsed] = parse_key_ring(key.entry()).keys
    assert parsed == key
    assert len(key.secret) == 32
    assert key.key_id.startswith("k") and len(key.key_id) == 9
    assert generate_key().secret != key.secret
    assert generate_key("rotation-2").key_id == "rotation-2"
    with pytest.raises(ValueError, match="key id"):
        EncryptionKey("no.dots", bytes(32))


def test_the_ring_names_a_missing_id() -> None:
    with pytest.raises(UnknownKeyError, match="'gone'"):
        parse_key_ring(f"k1:{SECRET}").key("gone")


def test_the_settings_never_show_the_keys() -> None:
    settings = Settings(countersign_encryption_keys=f"k1:{SECRET}")

    assert SECRET not in repr(settings)
    assert SECRET not in str(settings)


# ------------------------------------------------------------------------------ the key file


def test_the_key_file_is_made_once_private_and_reused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = key_file_for(tmp_path / "countersign.db")
    assert path.name == "countersign.db.key"

    with caplog.at_level(logging.WARNING, logger="countersign.security"):
        first = load_or_create_key_file(path)
        again = load_or_create_key_file(path)

    assert first.created and not again.created
    assert again.ring.current == first.ring.current
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    [warning] = caplog.records
    assert warning.levelno == logging.WARNING
    assert str(path.resolve()) in warning.getMessage()
    assert "back this file up" in warning.getMessage()
    assert base64.b64encode(first.ring.current.secret).decode() not in caplog.text
    assert _names(tmp_path) == ["countersign.db.key"]  # no temporary file left


def test_threads_racing_make_one_key(tmp_path: Path) -> None:
    path = tmp_path / "race.db.key"
    barrier = threading.Barrier(16)
    results: list[KeyRing] = []
    created: list[bool] = []

    def start() -> None:
        barrier.wait()
        loaded = load_or_create_key_file(path)
        results.append(loaded.ring)
        created.append(loaded.created)

    threads = [threading.Thread(target=start) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert created.count(True) == 1
    assert {ring.current for ring in results} == {results[0].current}


def test_processes_racing_make_one_key(tmp_path: Path) -> None:
    path = tmp_path / "race.db.key"
    code = (
        "import sys; from pathlib import Path; "
        "from bot.security import load_or_create_key_file as load; "
        "print('ready', flush=True); sys.stdin.readline(); "
        "print(load(Path(sys.argv[1])).ring.current.key_id)"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(path)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for _ in range(3)
    ]
    for process in processes:  # every one imported, so they start the race together
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
    ids = {process.communicate("go\n", timeout=60)[0].strip() for process in processes}

    assert len(ids) == 1 and ids != {""}
    assert parse_key_ring(path.read_text()).current.key_id in ids


def test_a_key_file_others_can_read_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "x.db.key"
    load_or_create_key_file(path)
    path.chmod(0o644)

    with caplog.at_level(logging.WARNING, logger="countersign.security"):
        load_or_create_key_file(path)

    assert "readable by others" in caplog.text


def test_a_broken_key_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.db.key"
    path.write_text("k1:short\n")

    with pytest.raises(SettingsError, match=f"the key file {path} entry 1"):
        load_or_create_key_file(path)


# ------------------------------------------------------------------------------ key sources


def test_postgres_without_a_key_refuses_to_start() -> None:
    for blank in (None, "", "   "):
        with pytest.raises(SettingsError) as caught:
            key_source(NO_SERVER, blank)
        assert "COUNTERSIGN_ENCRYPTION_KEYS is not set" in str(caught.value)
        assert "python -m bot keygen" in str(caught.value)


async def test_an_app_on_postgres_without_a_key_refuses_before_connecting() -> None:
    # the server does not exist: connecting first would fail differently
    with pytest.raises(SettingsError, match="python -m bot keygen"):
        await App.create(OfficeApplication, database_url=NO_SERVER, settings=Settings())


async def test_an_app_with_a_malformed_key_refuses_to_start() -> None:
    settings = Settings(countersign_encryption_keys="k1:short")
    with pytest.raises(SettingsError, match="COUNTERSIGN_ENCRYPTION_KEYS entry 1"):
        await App.create(OfficeApplication, database_url=NO_SERVER, settings=settings)


async def test_postgres_uses_the_setting() -> None:
    ring = await key_source(NO_SERVER, f"k1:{SECRET}").load()

    assert ring.key_ids == ("k1",)


async def test_in_memory_a_random_key_per_app_and_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    url = "sqlite+aiosqlite:///:memory:"

    with caplog.at_level(logging.WARNING, logger="countersign.security"):
        one, two = await key_source(url, None).load(), await key_source(url, None).load()
        async with await App.create(OfficeApplication, database_url=url, settings=Settings()):
            pass

    assert one.current.secret != two.current.secret
    assert _names(tmp_path) == []
    assert caplog.records == []


async def test_a_sqlite_file_gets_its_key_file_on_the_first_start_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'office.db'}"

    with caplog.at_level(logging.WARNING, logger="countersign.security"):
        async with await App.create(OfficeApplication, database_url=url, settings=Settings()):
            pass
        async with await App.create(OfficeApplication, database_url=url, settings=Settings()):
            pass

    assert "office.db.key" in _names(tmp_path)
    assert len(caplog.records) == 1


async def test_a_database_that_cannot_be_opened_leaves_no_key(tmp_path: Path) -> None:
    (tmp_path / "folder.db").mkdir()
    url = f"sqlite+aiosqlite:///{tmp_path / 'folder.db'}"

    with pytest.raises(Exception, match="unable to open database file"):
        await App.create(OfficeApplication, database_url=url, settings=Settings())
    for thread in threading.enumerate():  # aiosqlite's failed connection reports while we run
        if "_connection_worker_thread" in thread.name:
            await asyncio.to_thread(thread.join, 10)

    assert _names(tmp_path) == ["folder.db"]


async def test_the_setting_wins_and_the_key_file_still_reads(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'office.db'}"
    made = await key_source(url, None).load()

    ring = await key_source(url, f"k-set:{SECRET}").load()

    assert ring.key_ids == ("k-set", made.current.key_id)


async def test_a_key_id_in_both_with_different_keys_is_refused(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'office.db'}"
    made = await key_source(url, None).load()
    clash = f"{made.current.key_id}:{SECRET}"

    with pytest.raises(SettingsError, match="different keys the same id"):
        await key_source(url, clash).load()


async def test_the_setting_alone_makes_no_key_file(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'office.db'}"

    ring = await key_source(url, f"k1:{SECRET}").load()

    assert ring.key_ids == ("k1",)
    assert _names(tmp_path) == []


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_database_name_that_is_not_ascii_gets_its_key_file(tmp_path: Path) -> None:
    path = key_file_for(tmp_path / "données.db")

    assert load_or_create_key_file(path).ring.current == load_or_create_key_file(path).ring.current
