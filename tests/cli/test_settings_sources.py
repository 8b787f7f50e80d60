"""The three loaders (the runtime's, the Slack channel's, the desk's) read settings one way:
the environment over ``.env``, a blank value unset, a bad value one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import SettingsError, load_settings
from bot.desk.settings import load_desk_settings
from channels.slack.settings import load_slack_settings

DOT_ENV = """\
DATABASE_URL=sqlite+aiosqlite:///from-file.db
COUNTERSIGN_APP=from.file:App
SLACK_BOT_TOKEN=xoxb-file
SLACK_SIGNING_SECRET=file
PORT=
COUNTERSIGN_APPROVAL_CHANNEL=C0FILE
COUNTERSIGN_DESK_MODEL=
"""


@pytest.fixture
def dot_env(tmp_path: Path) -> str:
    path = tmp_path / ".env"
    path.write_text(DOT_ENV)
    return str(path)


def test_the_environment_wins_over_dot_env(dot_env: str) -> None:
    environ = {
        "COUNTERSIGN_APP": "from.env:App",
        "SLACK_SIGNING_SECRET": "env",
        "COUNTERSIGN_APPROVAL_CHANNEL": "C0ENV",
    }
    assert load_settings(environ, env_file=dot_env).countersign_app == "from.env:App"
    slack = load_slack_settings(environ, env_file=dot_env)
    assert slack.signing_secret.get_secret_value() == "env"
    assert slack.bot_token.get_secret_value() == "xoxb-file"
    assert load_desk_settings(environ, env_file=dot_env).approval_channel == "C0ENV"


def test_a_blank_value_is_unset(dot_env: str) -> None:
    assert load_slack_settings({}, env_file=dot_env).port == 3000  # PORT= in .env
    assert load_desk_settings({}, env_file=dot_env).model == "moonshotai/kimi-k2.6"
    assert load_settings({"DATABASE_URL": " "}, env_file=None).database_url.startswith("sqlite")
    with pytest.raises(SettingsError, match=r"^\[settings\.invalid\] SLACK_BOT_TOKEN is missing"):
        load_slack_settings({"SLACK_BOT_TOKEN": "", "SLACK_SIGNING_SECRET": "s"}, env_file=None)


def test_a_bad_value_is_one_line_naming_its_variable() -> None:
    with pytest.raises(SettingsError) as runtime:
        load_settings({"DATABASE_URL": "mysql://x"}, env_file=None)
    with pytest.raises(SettingsError) as slack:
        load_slack_settings({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s",
                             "PORT": "eighty"}, env_file=None)  # fmt: skip
    for error, variable in ((runtime.value, "DATABASE_URL"), (slack.value, "PORT")):
        assert error.message.startswith(variable)
        assert "\n" not in str(error)
