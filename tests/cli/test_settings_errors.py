"""Every settings problem, as a person meets it: one line on stderr naming the setting, exit 2.

Each case runs ``python -m bot``, ``serve``, ``demo`` or ``reencrypt`` as a process, with the
settings a person would set. ``serve`` (and the bare command) get a whole Slack setup (the
stub answers ``auth.test``; the desk runs on the offline model), so only the case's problem is
left.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.settings import load_settings
from bot.store.database import DEFAULT_DATABASE_URL
from tests.cli.processes import REPO, Ran, free_port, person_env, python_m_bot
from tests.databases import TEST_ENCRYPTION_KEYS
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
]


def one_line_naming(ran: Ran, case: Case, setting: str | None = None) -> None:
    assert ran.code == 2, ran.err
    assert "Traceback" not in ran.err
    [line] = ran.err_lines
    assert (setting or case.names) in line
    assert case.says in line


# ------------------------------------------------------------------------------ serve, bare


@pytest.fixture
def slack_setup(slack_api: SlackStub, tmp_path: Path) -> Callable[..., dict[str, str]]:
    """A person's Slack setup that serves (the desk on the offline model), plus ``settings``."""

    def env(**settings: str) -> dict[str, str]:
        setup = {
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": "secret",
            "SLACK_API_URL": slack_api.api_url,
            "COUNTERSIGN_APPROVAL_CHANNEL": "C0DESK",
            "COUNTERSIGN_DESK_MODEL": "offline",
            "PORT": str(free_port()),
            "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}",
        }
        return person_env(**(setup | settings))

    return env


@pytest.mark.parametrize("case", [c.param() for c in ENVIRONMENT_CASES])
def test_serve_tells_a_settings_problem_in_one_line(
    case: Case, slack_setup: Callable[..., dict[str, str]], tmp_path: Path
) -> None:
    one_line_naming(python_m_bot("serve", cwd=tmp_path, env=slack_setup(**case.settings)), case)


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
    setting never passes the first to fail the second with a traceback."""
    ran = python_m_bot("serve", cwd=tmp_path, env=slack_setup(COUNTERSIGN_APPROVAL_CHANNEL=channel))

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
    (tmp_path / "countersign.db").write_bytes(b"")  # the default database exists

    one_line_naming(python_m_bot("reencrypt", cwd=tmp_path, env=person_env(**case.settings)), case)


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
