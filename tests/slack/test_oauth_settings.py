"""Installed by OAuth: the settings that ask for it, each bad or missing one a line naming it and
exit 2 from ``python -m bot serve``; the single-workspace settings unchanged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.cli.main import main
from channels.slack.oauth import BOT_SCOPES
from channels.slack.settings import load_slack_settings
from tests.slack.test_setup import MANIFEST

OAUTH = {
    "SLACK_SIGNING_SECRET": "secret",
    "SLACK_CLIENT_ID": "111.222",
    "SLACK_CLIENT_SECRET": "client-secret",
    "SLACK_STATE_SECRET": "state-secret",
}


def test_the_three_oauth_settings_stand_for_the_bot_token() -> None:
    settings = load_slack_settings(OAUTH, env_file=None)

    assert settings.oauth
    assert settings.client_id == "111.222"
    assert not load_slack_settings(
        {"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1"}, env_file=None
    ).oauth


@pytest.mark.parametrize(
    "missing", ["SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "SLACK_STATE_SECRET"]
)
def test_a_missing_oauth_setting_is_one_line_naming_it_and_exit_2(
    missing: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("SLACK_", "COUNTERSIGN_")):
            monkeypatch.delenv(name)
    for name, value in OAUTH.items():
        if name != missing:
            monkeypatch.setenv(name, value)

    assert main(["serve"]) == 2

    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"{missing} is missing")


def test_neither_a_bot_token_nor_oauth_names_the_bot_token() -> None:
    from bot.core.errors import SettingsError

    with pytest.raises(SettingsError) as refused:
        load_slack_settings({"SLACK_SIGNING_SECRET": "s"}, env_file=None)
    assert refused.value.message.startswith("SLACK_BOT_TOKEN is missing")


def test_the_install_asks_for_the_manifests_scopes() -> None:
    import yaml

    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))

    assert set(BOT_SCOPES) == set(manifest["oauth_config"]["scopes"]["bot"])
    assert any(
        url.endswith("/slack/oauth_redirect") for url in manifest["oauth_config"]["redirect_urls"]
    )
