"""Every settings problem, as a person meets it: one line on stderr naming the setting, exit 2.

Each case runs ``python -m bot``, ``serve``, ``demo`` or ``reencrypt`` with the settings a
person would set: as a process, or (the variants of one rule, where one or two of them run as a
process) the same command line called in this process (``python_m_bot_in_process``). ``serve``
(and the bare command) get a whole Slack setup (the stub answers ``auth.test``; the desk runs on
the offline model), so only the case's problem is left.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.security import generate_key
from bot.settings import load_settings
from bot.store.database import DEFAULT_DATABASE_URL
from tests.cli.processes import (
    REPO,
    TIMEOUT_SECONDS,
    Ran,
    person_env,
    python_m_bot,
    python_m_bot_in_process,
)
from tests.databases import TEST_ENCRYPTION_KEYS
from tests.office import Inbox, Ledger
from tests.ports import free_port
from tests.security.office_run import KEY_A, KEY_B, open_office, script_office, start_office
from tests.slack.stub import SlackStub

KEYS = "COUNTERSIGN_ENCRYPTION_KEYS"
POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/does_not_exist_xyz"
KEY_16 = "k1:" + base64.b64encode(b"0123456789abcdef").decode()


@dataclass(frozen=True)
class Case:
    id: str
    settings: dict[str, str]
    names: str  # the setting the line must name
    says: str  # and what it says to do (a part of the line)
    postgres: bool = False

    def param(self) -> object:
        marks = [pytest.mark.postgres] if self.postgres else []
        return pytest.param(self, id=self.id, marks=marks)


ENVIRONMENT_CASES = [
    Case("postgres-without-keys", {"DATABASE_URL": POSTGRES}, KEYS, "python -m bot keygen"),
    Case("keys-garbage", {KEYS: "garbage"}, KEYS, "<key-id>:<base64 key>"),
    Case("keys-bad-base64", {KEYS: "k1:not*base64"}, KEYS, "not valid base64"),
    Case("keys-16-bytes", {KEYS: KEY_16}, KEYS, "is 16 bytes, not 32"),
    Case("keys-id-twice", {KEYS: f"{TEST_ENCRYPTION_KEYS},{TEST_ENCRYPTION_KEYS}"}, KEYS, "twice"),
    Case("keys-quoted", {KEYS: f'"{TEST_ENCRYPTION_KEYS}"'}, KEYS, "remove the quotes"),
    Case(
        "postgres-scheme",
        {"DATABASE_URL": "postgres://postgres@127.0.0.1/x", KEYS: TEST_ENCRYPTION_KEYS},
        "DATABASE_URL",
        "write postgresql+asyncpg://",
    ),
    Case(
        "postgresql-without-driver",
        {"DATABASE_URL": "postgresql://postgres@127.0.0.1/x", KEYS: TEST_ENCRYPTION_KEYS},
        "DATABASE_URL",
        "write postgresql+asyncpg://",
    ),
    Case(
        "mysql",
        {"DATABASE_URL": "mysql://root@127.0.0.1/countersign"},
        "DATABASE_URL",
        "use SQLite (sqlite+aiosqlite:///countersign.db) or PostgreSQL (postgresql+asyncpg://",
    ),
    Case(
        "database-does-not-exist",
        {"DATABASE_URL": POSTGRES, KEYS: TEST_ENCRYPTION_KEYS},
        "DATABASE_URL",
        'the database could not be opened: database "does_not_exist_xyz" does not exist',
        postgres=True,
    ),
    # each in our words, never pydantic's ("Input should be a valid integer")
    Case(
        "port-abc", {"PORT": "abc"}, "PORT", "is malformed: a port number (1 to 65535), not 'abc'"
    ),
    Case("port-too-high", {"PORT": "70000"}, "PORT", "a port number (1 to 65535), not '70000'"),
    Case(
        "metrics-port",
        {"COUNTERSIGN_METRICS_PORT": "http"},
        "COUNTERSIGN_METRICS_PORT",
        "a port number (1 to 65535), not 'http'",
    ),
    Case(
        "max-body",
        {"SLACK_MAX_BODY_BYTES": "10"},
        "SLACK_MAX_BODY_BYTES",
        "a number of bytes, at least 1024, not '10'",
    ),
    Case(
        "readyz-slack",
        {"COUNTERSIGN_READYZ_SLACK": "maybe"},
        "COUNTERSIGN_READYZ_SLACK",
        "1 or 0 (or true or false), not 'maybe'",
    ),
    Case(
        "log-format",
        {"COUNTERSIGN_LOG_FORMAT": "xml"},
        "COUNTERSIGN_LOG_FORMAT",
        "text or json, not 'xml'",
    ),
    Case(
        "log-level",
        {"COUNTERSIGN_LOG_LEVEL": "loud"},
        "COUNTERSIGN_LOG_LEVEL",
        "is malformed: DEBUG, INFO, WARNING or ERROR, not 'loud'",
    ),
    Case(
        "bind-address",
        {"COUNTERSIGN_BIND_ADDRESS": "example.com"},
        "COUNTERSIGN_BIND_ADDRESS",
        "an IP address of this machine (0.0.0.0: every interface; 127.0.0.1: this machine only)",
    ),
    Case(
        "model-timeout-alone",  # its own mistake, not a missing base URL
        {"COUNTERSIGN_MODEL_TIMEOUT_SECONDS": "abc"},
        "COUNTERSIGN_MODEL_TIMEOUT_SECONDS",
        "is malformed: a positive number of seconds, not 'abc'",
    ),
    Case(
        "otel-exporter",
        {"OTEL_TRACES_EXPORTER": "zipkin"},
        "OTEL_TRACES_EXPORTER",
        "is malformed: otlp, console or none, not 'zipkin'",
    ),
    Case(
        "desk-channel-missing",
        {"COUNTERSIGN_APPROVAL_CHANNEL": ""},
        "COUNTERSIGN_APPROVAL_CHANNEL",
        "is missing: the id of the Slack channel",
    ),
    Case(
        "otel-protocol",
        {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "is malformed: http/protobuf (the exporter of the otel extra), not 'grpc'",
    ),
]
WORDING_CASES = [
    c for c in ENVIRONMENT_CASES if c.settings.keys().isdisjoint({KEYS, "DATABASE_URL"})
]


def one_line_naming(ran: Ran, case: Case, setting: str | None = None) -> None:
    assert ran.code == 2, ran.err
    assert "Traceback" not in ran.err
    [line] = ran.err_lines
    assert (setting or case.names) in line
    assert case.says in line
    assert "Input should" not in line and "pydantic" not in line


# ------------------------------------------------------------------------------ serve, bare


def slack_env(slack_api: SlackStub, folder: Path, **settings: str) -> dict[str, str]:
    """A person's Slack setup that serves (the desk on the offline model), plus ``settings``."""
    setup = {
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": "secret",
        "SLACK_API_URL": slack_api.api_url,
        "COUNTERSIGN_APPROVAL_CHANNEL": "C0DESK",
        "COUNTERSIGN_DESK_MODEL": "offline",
        "PORT": str(free_port()),
        "DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'countersign.db'}",
    }
    return person_env(**(setup | settings))


@pytest.fixture
def slack_setup(slack_api: SlackStub, tmp_path: Path) -> Callable[..., dict[str, str]]:
    """:func:`slack_env` in the test's folder."""

    def env(**settings: str) -> dict[str, str]:
        return slack_env(slack_api, tmp_path, **settings)

    return env


SERVED_AS_A_PROCESS = ("port-abc", "database-does-not-exist")
"""Told by the settings check before anything heavy loads, and after it, by the database."""


@pytest.mark.parametrize(
    "case", [c.param() for c in ENVIRONMENT_CASES if c.id in SERVED_AS_A_PROCESS]
)
def test_serve_tells_a_settings_problem_in_one_line(
    case: Case, slack_setup: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    one_line_naming(python_m_bot("serve", cwd=tmp_path, env=slack_setup(**case.settings)), case)


@pytest.mark.parametrize("case", [c.param() for c in ENVIRONMENT_CASES])
def test_serve_tells_every_settings_problem_the_same_way(
    case: Case, slack_setup: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    """The same command line, called in this process (a process per case costs seconds)."""
    ran = python_m_bot_in_process("serve", cwd=tmp_path, env=slack_setup(**case.settings))

    one_line_naming(ran, case)


@pytest.mark.parametrize(
    "case", [c.param() for c in ENVIRONMENT_CASES if c.id in ("keys-garbage", "mysql")]
)
def test_the_bare_command_with_slack_set_up_tells_it_the_same_way(
    case: Case, slack_setup: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    one_line_naming(python_m_bot(cwd=tmp_path, env=slack_setup(**case.settings)), case)


@pytest.mark.parametrize(
    ("app", "says"),
    [("tests.slack.nowhere:App", "no module named 'tests.slack.nowhere'")],
)
def test_an_application_that_cannot_be_imported_says_so_and_names_pythonpath(
    app: str, says: str, slack_setup: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    ran = python_m_bot(
        "serve", cwd=tmp_path, env=slack_setup(COUNTERSIGN_APP=app, PYTHONPATH=str(REPO))
    )

    assert ran.code == 2, ran.err
    [line] = ran.err_lines
    assert line.startswith(f"COUNTERSIGN_APP: the module {app.split(':')[0]} cannot be imported")
    assert says in line
    assert "PYTHONPATH" in line
    assert "malformed" not in line


@pytest.mark.parametrize("channel", ["C1", "Cabc123", "D0DIRECT"])
def test_a_channel_id_slack_would_refuse_is_one_line_naming_the_setting(
    channel: str, slack_setup: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    """The desk's settings check is the rule ``slack_channel`` applies (a channel id, C… or
    G…, then 2 to 40 upper-case letters and digits): what one refuses the other does too, so a
    setting never passes the first to fail the second with a traceback. (One of them as a
    process, the others called in this process.)"""
    run = python_m_bot if channel == "C1" else python_m_bot_in_process
    ran = run("serve", cwd=tmp_path, env=slack_setup(COUNTERSIGN_APPROVAL_CHANNEL=channel))

    one_line_naming(
        ran,
        Case(channel, {}, "COUNTERSIGN_APPROVAL_CHANNEL is malformed", f"not {channel!r}"),
    )
    assert not (tmp_path / "countersign.db").exists()  # refused before the database opened


def test_a_refused_bot_token_is_one_line_naming_it(
    slack_api: SlackStub, slack_setup: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    slack_api.errors["auth.test"] = "token_revoked"
    try:
        ran = python_m_bot("serve", cwd=tmp_path, env=slack_setup())
    finally:
        del slack_api.errors["auth.test"]

    assert ran.code == 2, ran.err
    [line] = ran.err_lines
    assert line.startswith("SLACK_BOT_TOKEN is refused by Slack (token_revoked): ")
    assert not (tmp_path / "countersign.db").exists()  # refused before the database opened


def test_an_unreachable_slack_api_is_one_line_naming_it(
    slack_setup: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    closed = f"http://127.0.0.1:{free_port()}/api/"

    ran = python_m_bot("serve", cwd=tmp_path, env=slack_setup() | {"SLACK_API_URL": closed})

    assert ran.code == 2, ran.err
    [line] = ran.err_lines
    assert line.startswith(f"SLACK_API_URL: Slack's Web API cannot be reached at {closed}")


# ------------------------------------------------------------------------------ demo


DEMO_CASES = [
    Case("postgres-without-keys", {}, KEYS, "python -m bot keygen"),
    Case("keys-garbage", {KEYS: "garbage"}, KEYS, "<key-id>:<base64 key>"),
    Case(
        "database-does-not-exist",
        {KEYS: TEST_ENCRYPTION_KEYS},
        "--database-url",
        'database "does_not_exist_xyz" does not exist',
        postgres=True,
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in DEMO_CASES])
def test_demo_on_postgres_reads_the_keys_like_serve(case: Case, tmp_path: Path) -> None:
    ran = python_m_bot(
        "demo", "--database-url", POSTGRES, cwd=tmp_path, env=person_env(**case.settings)
    )

    one_line_naming(ran, case)


@pytest.mark.parametrize(
    ("url", "says"),
    [("mysql+aiomysql://root@127.0.0.1/x", "use SQLite (sqlite+aiosqlite")],
)
def test_demo_tells_an_unserved_database_url(url: str, says: str, tmp_path: Path) -> None:
    ran = python_m_bot("demo", "--database-url", url, cwd=tmp_path)

    one_line_naming(ran, Case("url", {}, "--database-url", says))


# ------------------------------------------------------------------------------ reencrypt


@pytest.mark.parametrize(
    "case",
    [
        c.param()
        for c in ENVIRONMENT_CASES
        if c.id in ("postgres-without-keys", "keys-quoted", "mysql", "database-does-not-exist")
    ],
)
def test_reencrypt_tells_a_settings_problem_in_one_line(case: Case, tmp_path: Path) -> None:
    """Two as a process (a key setting's form; a database that is not there), two called in
    this process."""
    (tmp_path / "countersign.db").write_bytes(b"")  # the default database exists
    as_a_process = case.id in ("keys-quoted", "database-does-not-exist")
    run = python_m_bot if as_a_process else python_m_bot_in_process

    one_line_naming(run("reencrypt", cwd=tmp_path, env=person_env(**case.settings)), case)


def test_a_blank_database_url_is_unset(tmp_path: Path) -> None:
    ran = python_m_bot("reencrypt", cwd=tmp_path, env=person_env(DATABASE_URL=""))

    assert ran.code == 2
    assert ran.err_lines == [f"DATABASE_URL: there is no database at {tmp_path / 'countersign.db'}"]
    assert load_settings({"DATABASE_URL": "  "}, env_file=None).database_url == DEFAULT_DATABASE_URL


def test_a_blank_database_url_in_dot_env_is_unset_too(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "DATABASE_URL=\nCOUNTERSIGN_ENCRYPTION_KEYS=\n", encoding="utf-8"
    )

    ran = python_m_bot("reencrypt", cwd=tmp_path)

    assert ran.err_lines == [f"DATABASE_URL: there is no database at {tmp_path / 'countersign.db'}"]


# ------------------------------------------------------------------------------ told at once

HEAVY = ("slack_bolt", "slack_sdk", "langgraph", "langchain_core", "langchain_openai")


@pytest.fixture(scope="module")
def told_at_once(
    slack_api: SlackStub, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Ran, set[str]]]:
    """Each of :data:`WORDING_CASES` told by ``python -m bot serve`` called in turn in one fresh
    process (``tests.cli.told_at_once``): what it said, and the modules loaded by then."""
    cases = [
        {"folder": str(folder), "env": slack_env(slack_api, folder, **case.settings)}
        for case in WORDING_CASES
        for folder in [tmp_path_factory.mktemp(case.id)]
    ]
    done = subprocess.run(
        [sys.executable, "-m", "tests.cli.told_at_once"],
        input="".join(f"{json.dumps(case)}\n" for case in cases),
        capture_output=True,
        text=True,
        cwd=REPO,
        env=person_env(PYTHONPATH=str(REPO)),
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(said) == len(WORDING_CASES), done.stderr
    return {
        case.id: (Ran(code=s["code"], out=s["out"], err=s["err"]), set(s["loaded"]))
        for case, s in zip(WORDING_CASES, said, strict=True)
    }


@pytest.mark.parametrize("case", [c.param() for c in WORDING_CASES])
def test_a_settings_problem_is_told_before_bolt_langgraph_and_langchain_load(
    case: Case, told_at_once: dict[str, tuple[Ran, set[str]]]
) -> None:
    """They take seconds to import: a mistyped setting is told without waiting for them. The
    problems are told one after another by one process (the modules it loaded for one stay
    loaded for the next), so a check that loads them shows in its case's line."""
    ran, loaded = told_at_once[case.id]

    one_line_naming(ran, case)
    assert loaded.isdisjoint(HEAVY), loaded & set(HEAVY)


def test_the_web_desk_tells_a_bad_port_before_langgraph_and_langchain_load(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=person_env(PORT="abc"),
        timeout=TIMEOUT_SECONDS,
        check=False,
    )

    told = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert done.returncode == 2
    assert told[-1] == "PORT is malformed: a port number (1 to 65535), not 'abc'"
    assert [m.split(" is missing")[0] for m in told[:-1]] == [
        "SLACK_BOT_TOKEN",
        "SLACK_SIGNING_SECRET",
    ]
    assert not [line for line in done.stderr.splitlines() if line.endswith(HEAVY)]
    assert done.stdout == ""  # nothing served


# ------------------------------------------------------------------------------ the keys


def _office_under(url: str, keys: str) -> None:
    """Leave a paused office run in ``url``, written under ``keys``."""
    script_office()

    async def start() -> None:
        async with await open_office(url, keys, Inbox(), Ledger()) as app:
            await start_office(app)

    asyncio.run(start())


OTHER_KEY_A = generate_key("key-a").entry()  # the same id as KEY_A, another key


@pytest.mark.parametrize(
    ("keys", "says"),
    [
        (KEY_B, "are encrypted under key id 'key-a', which it does not hold: put that key back"),
        (OTHER_KEY_A, "under key id 'key-a' do not open with the key it gives that id"),
    ],
    ids=["another-key", "same-id-another-key"],
)
@pytest.mark.parametrize("command", [("serve",), ()], ids=["serve", "bare"])
def test_keys_that_do_not_open_the_database_stop_the_start_in_one_line(
    command: tuple[str, ...],
    keys: str,
    says: str,
    slack_setup: Callable[..., dict[str, str]],
    tmp_path: Path,
) -> None:
    """Two of the four as a process (serve with another key; the bare command with the same
    id's other key), the others called in this process."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    _office_under(url, KEY_A)
    as_a_process = (command == ("serve",)) == (keys == KEY_B)
    run = python_m_bot if as_a_process else python_m_bot_in_process

    ran = run(*command, cwd=tmp_path, env=slack_setup(**{KEYS: keys}))

    assert ran.code == 2, ran.err
    [line] = ran.err_lines
    assert line.startswith(f"{KEYS} cannot open the stored data: values in cs_")
    assert says in line
    assert KEY_A.split(":")[1] not in line and keys.split(":")[1] not in line


def test_the_web_desk_stops_on_keys_that_do_not_open_its_database(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    _office_under(url, KEY_A)

    ran = python_m_bot(
        cwd=tmp_path, env=person_env(DATABASE_URL=url, PORT=str(free_port()), **{KEYS: KEY_B})
    )

    assert ran.code == 2, ran.err
    *missing, line = ran.err_lines  # the Slack settings it misses, then why it stops
    assert [m.split(" is missing")[0] for m in missing] == [
        "SLACK_BOT_TOKEN",
        "SLACK_SIGNING_SECRET",
    ]
    assert line.startswith(f"{KEYS} cannot open the stored data: ")


def test_reencrypt_with_a_missing_old_key_names_the_setting(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    _office_under(url, KEY_A)

    ran = python_m_bot("reencrypt", cwd=tmp_path, env=person_env(DATABASE_URL=url, **{KEYS: KEY_B}))

    assert ran.code == 2, ran.err
    [line] = ran.err_lines
    assert line.startswith(f"{KEYS} cannot open the stored data: ")
    assert "'key-a', which it does not hold" in line


# ------------------------------------------------------------------------------ the address


def test_an_address_not_of_this_machine_is_one_line_naming_it(
    slack_setup: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    env = slack_setup(COUNTERSIGN_BIND_ADDRESS="192.0.2.1")  # TEST-NET-1: nobody's

    ran = python_m_bot("serve", cwd=tmp_path, env=env)

    assert ran.code == 2, ran.err
    line = ran.err_lines[-1]
    assert line.startswith(
        f"PORT {env['PORT']} cannot be served on 192.0.2.1 (COUNTERSIGN_BIND_ADDRESS): "
    )
