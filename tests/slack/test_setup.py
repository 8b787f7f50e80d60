"""Settings, the manifest, the Slack channel factory, and the small pieces they rely on."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from bot import SettingsError, SetupError
from channels.slack import slack_channel
from channels.slack.listeners.commands import PENDING_COMMAND
from channels.slack.redaction import PauseIdRedactor, redact
from channels.slack.settings import load_slack_settings
from channels.slack.signing import MetadataSigner, ModalMetadata
from channels.slack.tasks import BackgroundTasks
from channels.slack.threads import SlackThread
from channels.slack.web import EVENTS_PATH
from tests.slack.office import ExpenseApprovalChannel, RefundApprovalChannel

MANIFEST = Path(__file__).resolve().parents[2] / "manifest.yml"
REQUIRED = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s3cret"}


# --------------------------------------------------------------------------------------------
# Settings.


def test_settings_from_the_environment_with_defaults() -> None:
    settings = load_slack_settings(REQUIRED, env_file=None)

    assert settings.bot_token.get_secret_value() == "xoxb-1"
    assert settings.api_url == "https://slack.com/api/"
    assert (settings.port, settings.tenant, settings.socket_mode) == (3000, None, False)
    assert "xoxb-1" not in repr(settings) and "s3cret" not in repr(settings)


def test_settings_read_dot_env_under_the_environment(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("SLACK_BOT_TOKEN=xoxb-file\nSLACK_SIGNING_SECRET=file\nPORT=4000\n")

    settings = load_slack_settings({"PORT": "5000"}, env_file=str(env))

    assert settings.bot_token.get_secret_value() == "xoxb-file"
    assert settings.port == 5000


@pytest.mark.parametrize(
    ("environ", "line"),
    [
        ({"SLACK_SIGNING_SECRET": "s"}, "SLACK_BOT_TOKEN is missing: create the Slack app"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": " "}, "SLACK_SIGNING_SECRET is"),
        ({**REQUIRED, "SLACK_BOT_TOKEN": "xoxp-user"}, "SLACK_BOT_TOKEN is malformed: a bot"),
        ({**REQUIRED, "SLACK_APP_TOKEN": "xoxb-2"}, "SLACK_APP_TOKEN is malformed: an app-level"),
        ({**REQUIRED, "SLACK_API_URL": "slack.com"}, "SLACK_API_URL is malformed: it must be"),
        ({**REQUIRED, "PORT": "eighty"}, "PORT is malformed"),
        ({**REQUIRED, "PORT": "70000"}, "PORT is malformed"),
        ({**REQUIRED, "SLACK_MAX_BODY_BYTES": "10"}, "SLACK_MAX_BODY_BYTES is malformed"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(environ: dict[str, str], line: str) -> None:
    with pytest.raises(SettingsError) as raised:
        load_slack_settings(environ, env_file=None)

    message = raised.value.message
    assert message.startswith(line)
    assert "\n" not in message


def test_an_app_token_means_socket_mode() -> None:
    settings = load_slack_settings(
        {**REQUIRED, "SLACK_APP_TOKEN": "xapp-1", "COUNTERSIGN_TENANT": "acme"}, env_file=None
    )

    assert settings.socket_mode and settings.tenant == "acme"


# --------------------------------------------------------------------------------------------
# The manifest.


def test_the_manifest_declares_what_the_bot_relies_on() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    settings, features = manifest["settings"], manifest["features"]

    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert scopes >= {
        "chat:write",
        "commands",
        "channels:history",
        "groups:history",
        "im:history",
        "im:write",
        "app_mentions:read",
        "users:read",
        "usergroups:read",
        "assistant:write",
    }
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "message.channels",
        "message.groups",
        "message.im",
        "app_mention",
        "app_home_opened",
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "agent_session_stopped",
    }
    assert features["assistant_view"]["assistant_description"]
    url = settings["event_subscriptions"]["request_url"]
    assert url.endswith(EVENTS_PATH)
    assert settings["interactivity"] == {"is_enabled": True, "request_url": url}
    [command] = features["slash_commands"]
    assert (command["command"], command["url"]) == (PENDING_COMMAND, url)
    assert features["app_home"]["home_tab_enabled"] is True
    assert features["app_home"]["messages_tab_enabled"] is True
    assert settings["socket_mode_enabled"] is False
    assert "# socket_mode_enabled: true" in MANIFEST.read_text(encoding="utf-8")
    assert len(manifest["display_information"]["name"]) <= 35


# --------------------------------------------------------------------------------------------
# slack_channel.


def test_slack_channel_refuses_misuse_at_once() -> None:
    with pytest.raises(SetupError, match="not a @channel_role"):
        slack_channel(str, name="x-channel", conversation="C1234")
    with pytest.raises(SetupError, match="conversation must be a Slack conversation id"):
        slack_channel(RefundApprovalChannel, name="a-channel", conversation="#general")
    with pytest.raises(SetupError, match="name at least one approver"):
        slack_channel(RefundApprovalChannel, name="a-channel", conversation="C1234")
    with pytest.raises(SetupError, match="user ids"):
        slack_channel(
            RefundApprovalChannel, name="a-channel", conversation="C1234", approvers=["bob"]
        )
    with pytest.raises(SetupError, match="approvers would be ignored"):
        slack_channel(
            ExpenseApprovalChannel, name="b-channel", conversation="C1234", approvers=["U123"]
        )


def test_slack_channel_makes_a_new_implementation_of_the_role() -> None:
    made = slack_channel(
        RefundApprovalChannel,
        name="other-refund-channel",
        conversation="C1234",
        approvers=["U123", "S456", "U123"],
    )

    assert issubclass(made, RefundApprovalChannel)
    assert made.approvers() == ("U123", "S456")


# --------------------------------------------------------------------------------------------
# Pieces.


def test_slack_threads_round_trip_and_others_are_not_slack() -> None:
    thread = SlackThread(team="T1", channel="C2", ts="1700000000.000100")

    assert SlackThread.parse(thread.thread_id()) == thread
    assert thread.thread_id() == "slack:T1:C2:1700000000.000100"
    for other in ("abc", "slack:T1:C2", "slack:T1:#x:1.2", "slack:t1:C2:1.2", "x:T1:C2:1.2"):
        assert SlackThread.parse(other) is None


def test_modal_metadata_is_sealed_to_its_kind_and_user() -> None:
    signer = MetadataSigner("secret")
    sealed = signer.seal(ModalMetadata(kind="reject", pause_id="p" * 32, user="U1", channel="C1"))

    opened = signer.open(sealed, kind="reject", user="U1")
    assert opened is not None and (opened.pause_id, opened.channel) == ("p" * 32, "C1")
    assert signer.open(sealed, kind="edit", user="U1") is None
    assert signer.open(sealed, kind="reject", user="U2") is None
    assert MetadataSigner("other").open(sealed, kind="reject", user="U1") is None
    assert signer.open(sealed[:-1] + "0", kind="reject", user="U1") is None
    assert signer.open("garbage", kind="reject", user="U1") is None
    assert "p" * 32 not in repr(opened)


def test_the_redactor_hides_hex_tokens_in_messages_args_and_tracebacks() -> None:
    pause_id = "0123456789abcdef0123456789abcdef"
    assert redact(f"x {pause_id} y") == "x <redacted> y"
    assert redact("0123456789abcdef0123456789abcdef0") == "0123456789abcdef0123456789abcdef0"
    try:
        raise ValueError(pause_id)
    except ValueError as error:
        record = logging.LogRecord(
            "countersign",
            logging.ERROR,
            __file__,
            1,
            "pause %s",
            (pause_id,),
            (ValueError, error, None),
        )
    assert PauseIdRedactor().filter(record)
    assert pause_id not in record.getMessage()
    assert record.exc_text is not None and pause_id not in record.exc_text


async def test_background_work_is_awaited_or_cancelled_at_close() -> None:
    import asyncio

    tasks = BackgroundTasks()
    finished: list[str] = []

    async def quick() -> None:
        await asyncio.sleep(0)
        finished.append("quick")

    async def slow() -> None:
        await asyncio.sleep(60)
        finished.append("slow")

    tasks.spawn(quick(), name="quick")
    tasks.spawn(slow(), name="slow")
    await tasks.close(timedelta(seconds=0.05))

    assert finished == ["quick"]
    assert len(tasks) == 0
    assert tasks.spawn(quick(), name="late") is None
