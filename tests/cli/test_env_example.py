"""``.env.example``, copied to ``.env`` as the README says, serves each command on the port the
README names: ``PORT`` is left unset (``serve``: 3000; the web desk: 8000)."""

from __future__ import annotations

import re

from bot.cli.preflight import WEB_DESK_PORT
from bot.settings import environment
from channels.slack.settings import DEFAULT_PORT, load_slack_settings
from tests.cli.processes import REPO

EXAMPLE = REPO / ".env.example"


def test_the_example_leaves_port_to_each_command() -> None:
    copied = environment({}, env_file=str(EXAMPLE))

    assert "PORT" not in copied
    settings = load_slack_settings(
        {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}, env_file=str(EXAMPLE)
    )
    assert settings.port == DEFAULT_PORT == 3000


def test_the_readme_names_the_ports_the_commands_use() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")

    [web_desk] = re.findall(
        r"serves the office desk on the web, on `http://127\.0\.0\.1:(\d+)/`", readme
    )
    assert int(web_desk) == WEB_DESK_PORT
    assert f"unset, `serve` uses {DEFAULT_PORT}" in EXAMPLE.read_text(encoding="utf-8")
    assert f"unset: {WEB_DESK_PORT}" in EXAMPLE.read_text(encoding="utf-8")
